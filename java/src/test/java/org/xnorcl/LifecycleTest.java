// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** close(): idempotent; every later use throws IllegalStateException; a model outlives its runtime. */
class LifecycleTest {
  @Test
  void everyMethodOfAClosedModelThrows() throws Exception {
    Model m = Model.load(Fixture.runtime(), Fixture.bytes("tiny"));
    m.close();
    m.close();
    List<Executable> calls = Arrays.asList(m::inputs, m::outputs, m::plan, m::lastNodeTimes,
        () -> m.run(new float[16]), () -> m.run(Fixture.directFloats(16)),
        () -> m.run(Fixture.directFloats(16), Fixture.directFloats(16)), () -> m.run(Fixture.inputs("tiny")));
    for (Executable call : calls) {
      assertThrows(IllegalStateException.class, call);
    }
  }

  @Test
  void everyMethodOfAClosedRuntimeThrows() throws Exception {
    Runtime rt = Runtime.create();
    rt.close();
    rt.close();
    byte[] bytes = Fixture.bytes("tiny");
    assertThrows(IllegalStateException.class, rt::deviceName);
    assertThrows(IllegalStateException.class, rt::variant);
    assertThrows(IllegalStateException.class, () -> Model.load(rt, bytes));
    assertThrows(IllegalStateException.class, () -> Model.load(rt, Fixture.direct(bytes)));
    assertThrows(IllegalStateException.class, () -> Model.load(rt, Fixture.path("tiny.xnn").toString()));
  }

  // The documented choice: a model holds the runtime state it needs, so it keeps working.
  @Test
  void aModelKeepsWorkingAfterItsRuntimeIsClosed() throws Exception {
    Model m;
    try (Runtime rt = Runtime.create()) {
      m = Model.load(rt, Fixture.bytes("vehicle"));
    }
    try (Model model = m) {
      for (int i = 0; i < 3; ++i) {
        Fixture.assertOutput("vehicle", "output", model.run(Fixture.inputs("vehicle").get("input")));
      }
    }
  }
}
