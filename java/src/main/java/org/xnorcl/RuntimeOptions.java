// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

import java.io.File;

/**
 * What {@link Runtime#create(RuntimeOptions)} opens: a mutable set of options, each unset by default (then the
 * native library's default applies, including its environment variables). Setters return {@code this}:
 *
 * <pre>{@code
 * Runtime rt = Runtime.create(new RuntimeOptions()
 *     .variant(Variant.GLOBAL)
 *     .cacheDirectory(context.getCodeCacheDir()));
 * }</pre>
 */
public final class RuntimeOptions {
  String device;
  Variant variant;
  String cacheDirectory;

  /** Options with nothing set. */
  public RuntimeOptions() {}

  /**
   * The OpenCL device: {@code "P:D"} (platform and device indices) or a case-insensitive part of
   * {@code "<platform> / <device>"}. Unset: XNORCL_DEVICE, else the first GPU, else accelerator, else CPU.
   *
   * @param device the device, or null for the default
   * @return this
   */
  public RuntimeOptions device(String device) {
    this.device = device;
    return this;
  }

  /**
   * The kernel variant. Unset: XNORCL_VARIANT, else {@link Variant#AUTO}.
   *
   * @param variant the variant, or null for the default
   * @return this
   */
  public RuntimeOptions variant(Variant variant) {
    this.variant = variant;
    return this;
  }

  /**
   * Where compiled kernel programs are kept, so that later starts skip the OpenCL compiler (seconds on a
   * phone). An Android app passes {@code Context.getCodeCacheDir()}. {@code "off"} disables the cache. Unset:
   * XNORCL_CACHE_DIR, else the native default ({@code ~/.cache/xnorcl}; on Android no usable default exists).
   *
   * @param directory the directory, or null for the default
   * @return this
   */
  public RuntimeOptions cacheDirectory(String directory) {
    this.cacheDirectory = directory;
    return this;
  }

  /**
   * As {@link #cacheDirectory(String)}, from a {@link File}.
   *
   * @param directory the directory, or null for the default
   * @return this
   */
  public RuntimeOptions cacheDirectory(File directory) {
    this.cacheDirectory = directory == null ? null : directory.getPath();
    return this;
  }
}
