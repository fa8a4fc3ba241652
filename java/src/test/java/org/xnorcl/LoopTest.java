// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

import java.io.IOException;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A long loop of runs must not leak: the process's resident memory stays flat (the JVM's own allocations are
 * collected; a native leak per run would not be), and -Xcheck:jni (CTest's command) reports local references
 * piling up in a native call. Also prints the time per run through Java, next to the C++ bench's figure.
 */
class LoopTest {
  private static long rssKiB() throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IllegalStateException("no VmRSS in /proc/self/status");
  }

  private static void settle() throws InterruptedException {
    for (int i = 0; i < 3; ++i) {
      System.gc();
      Thread.sleep(50);
    }
  }

  @Test
  void twoThousandRunsDoNotGrowTheProcess() throws Exception {
    try (Model m = Model.load(Fixture.runtime(), Fixture.bytes("tiny"))) {
      Map<String, float[]> inputs = Fixture.inputs("tiny");
      // Warm up: the JIT and the heap settle over the first few thousand runs (measured alone: +13 MiB over
      // 6000 runs, then under 0.1 MiB per 10,000 runs).
      for (int i = 0; i < 6000; ++i) {
        m.run(inputs);
      }
      // Windows of 2000 runs: the JVM may still grow in one (other tests ran before), but a native leak of
      // 512 bytes per run or more grows every window by 1 MiB or more.
      StringBuilder growth = new StringBuilder();
      for (int window = 0; window < 5; ++window) {
        settle();
        long before = rssKiB();
        for (int i = 0; i < 2000; ++i) {
          Map<String, float[]> out = m.run(inputs);
          if (i % 500 == 0) {
            Fixture.assertOutput("tiny", "sum", out.get("sum"));
          }
          m.lastNodeTimes();
        }
        settle();
        long grown = rssKiB() - before;
        growth.append(growth.length() == 0 ? "" : ", ").append(grown).append(" KiB");
        System.out.println("2000 runs of tiny: resident memory " + before + " KiB -> " + (before + grown) + " KiB");
        if (grown < 1024) {
          return;
        }
      }
      throw new AssertionError("resident memory grew in every window of 2000 runs: " + growth);
    }
  }

  @Test
  void timePerRun() throws Exception {
    for (String model : new String[] {"tiny", "vehicle"}) {
      try (Model m = Model.load(Fixture.runtime(), Fixture.bytes(model))) {
        String first = m.inputs().get(0).name();
        float[] x = Fixture.inputs(model).get(first);
        Map<String, float[]> named = Fixture.inputs(model);
        FloatBuffer in = Fixture.directFloats(x);
        FloatBuffer out = Fixture.directFloats(m.outputs().get(0).size());
        int n = model.equals("tiny") ? 2000 : 300;
        double[] map = new double[n];
        double[] buffers = new double[n];
        for (int i = 0; i < n; ++i) {
          long t0 = System.nanoTime();
          m.run(named);
          long t1 = System.nanoTime();
          if (named.size() == 1) {
            m.run(in, out);
          }
          long t2 = System.nanoTime();
          map[i] = (t1 - t0) / 1e3;
          buffers[i] = (t2 - t1) / 1e3;
        }
        Arrays.sort(map);
        Arrays.sort(buffers);
        System.out.printf("java %s: median %.1f us per run(Map), %.1f us per run(FloatBuffer, FloatBuffer)%n",
            model, map[n / 2], named.size() == 1 ? buffers[n / 2] : Double.NaN);
      }
    }
  }
}
