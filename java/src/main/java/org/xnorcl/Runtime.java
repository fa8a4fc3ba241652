// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

import java.util.Objects;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * An OpenCL device with xnorcl's kernels compiled for it: the C++ {@code xnorcl::Runtime}. Create one per app
 * and load every {@link Model} on it.
 *
 * <p>Import it by name ({@code import org.xnorcl.Runtime;}): a wildcard import of {@code org.xnorcl.*} makes
 * {@code Runtime} ambiguous with {@code java.lang.Runtime}.
 *
 * <p>Threads: a Runtime may be used from many threads at once (several threads may load models on it
 * concurrently). {@link #close()} waits for loads in progress.
 *
 * <p>Lifetime: a model holds the runtime state it needs, so closing a Runtime while models loaded on it are
 * open is allowed: those models keep working, and the device's context is released when the last of them is
 * closed. Only the Runtime object itself becomes unusable ({@link IllegalStateException}).
 */
public final class Runtime implements AutoCloseable {
  // Read: any use of the handle (loads may run in parallel); write: close.
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private long handle;

  private Runtime(long handle) {
    this.handle = handle;
  }

  /**
   * Opens the default device with default options (see {@link RuntimeOptions}).
   *
   * @return the runtime; close it when done
   * @throws DeviceNotFoundException if there is no OpenCL platform or device
   * @throws XnorclException for any other native failure (an OpenCL call, a kernel build)
   */
  public static Runtime create() {
    return create(new RuntimeOptions());
  }

  /**
   * Opens a device as the options say. The first start on a device compiles the kernels (seconds); with a
   * cache directory later starts load them.
   *
   * @param options the device, variant and cache directory; unset ones take the defaults
   * @return the runtime; close it when done
   * @throws NullPointerException if options is null
   * @throws DeviceNotFoundException if no device matches
   * @throws InvalidArgumentException for an option the library refuses
   * @throws XnorclException for any other native failure
   */
  public static Runtime create(RuntimeOptions options) {
    Objects.requireNonNull(options, "options");
    NativeLibrary.load();
    int variant = options.variant == null ? -1 : options.variant.ordinal();
    return new Runtime(nativeCreate(options.device, variant, options.cacheDirectory));
  }

  /**
   * The device, as {@code "<platform> / <device>"}.
   *
   * @return the device's name
   * @throws IllegalStateException if the runtime is closed
   */
  public String deviceName() {
    lock.readLock().lock();
    try {
      return nativeDeviceName(open());
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * The variant in use: {@link Variant#LOCAL} or {@link Variant#GLOBAL}, never AUTO.
   *
   * @return the variant
   * @throws IllegalStateException if the runtime is closed
   */
  public Variant variant() {
    lock.readLock().lock();
    try {
      return Variant.values()[nativeVariant(open())];
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Releases this Runtime's hold on the device. Models loaded on it keep working (they hold the device state
   * they need). A second call does nothing.
   */
  @Override
  public void close() {
    lock.writeLock().lock();
    try {
      if (handle != 0) {
        nativeDestroy(handle);
        handle = 0;
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Runs a load against the native runtime, which stays open until it returns. */
  long load(java.util.function.LongUnaryOperator loader) {
    lock.readLock().lock();
    try {
      return loader.applyAsLong(open());
    } finally {
      lock.readLock().unlock();
    }
  }

  private long open() {
    if (handle == 0) {
      throw new IllegalStateException("the Runtime is closed");
    }
    return handle;
  }

  private static native long nativeCreate(String device, int variant, String cacheDirectory);

  private static native String nativeDeviceName(long handle);

  private static native int nativeVariant(long handle);

  private static native void nativeDestroy(long handle);
}
