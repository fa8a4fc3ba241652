// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Misuse from many threads is safe (runs serialize) and correct use in parallel gives correct outputs. */
class ConcurrencyTest {
  private static void checkAll(List<Future<?>> futures) throws Exception {
    for (Future<?> f : futures) {
      f.get(10, TimeUnit.MINUTES);  // rethrows a failed assertion of the worker
    }
  }

  @Test
  void manyThreadsRunOneModel() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try (Model m = Model.load(Fixture.runtime(), Fixture.bytes("tiny"))) {
      Map<String, float[]> inputs = Fixture.inputs("tiny");
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < 8; ++t) {
        futures.add(pool.submit(() -> {
          for (int i = 0; i < 50; ++i) {
            Map<String, float[]> out = m.run(inputs);
            Fixture.assertOutput("tiny", "sum", out.get("sum"));
            Fixture.assertOutput("tiny", "sign", out.get("sign"));
          }
          return null;
        }));
      }
      checkAll(futures);
    } finally {
      pool.shutdown();
    }
  }

  @Test
  void severalModelsRunAtOnce() throws Exception {
    String[] models = {"vehicle", "bireal", "tiny", "vehicle"};
    ExecutorService pool = Executors.newFixedThreadPool(models.length);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (String name : models) {
        futures.add(pool.submit(() -> {
          try (Model m = Model.load(Fixture.runtime(), Fixture.bytes(name))) {
            for (int i = 0; i < 5; ++i) {
              Map<String, float[]> out = m.run(Fixture.inputs(name));
              for (Fixture.Io io : Fixture.io(name, false)) {
                Fixture.assertOutput(name, io.name, out.get(io.name));
              }
            }
          }
          return null;
        }));
      }
      checkAll(futures);
    } finally {
      pool.shutdown();
    }
  }

  // close() while other threads run: it waits for the run in progress; later runs throw, none crashes.
  @Test
  void closeDuringRunsWaitsAndLaterRunsThrow() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      Model m = Model.load(Fixture.runtime(), Fixture.bytes("vehicle"));
      float[] x = Fixture.inputs("vehicle").get("input");
      List<Future<Integer>> futures = new ArrayList<>();
      for (int t = 0; t < 4; ++t) {
        futures.add(pool.submit(() -> {
          int runs = 0;
          try {
            while (true) {
              Fixture.assertOutput("vehicle", "output", m.run(x));
              ++runs;
            }
          } catch (IllegalStateException closed) {
            return runs;
          }
        }));
      }
      Thread.sleep(300);
      m.close();
      for (Future<Integer> f : futures) {
        f.get(5, TimeUnit.MINUTES);
      }
      assertThrows(IllegalStateException.class, () -> m.run(x));
      assertEquals(4, futures.size());
    } finally {
      pool.shutdown();
    }
  }
}
