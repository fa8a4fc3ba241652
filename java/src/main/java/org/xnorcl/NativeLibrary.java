// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

/** Loads libxnorcl_jni once, before the first native call. */
final class NativeLibrary {
  private NativeLibrary() {}

  static {
    // On the desktop the directory comes from -Djava.library.path; on Android from the APK's jniLibs.
    System.loadLibrary("xnorcl_jni");
  }

  /** Does nothing but make sure the static initializer ran. */
  static void load() {}
}
