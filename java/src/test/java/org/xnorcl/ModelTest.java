// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.FloatBuffer;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Outputs against the C++ host reference, from every way of loading, and what a model says about itself. */
class ModelTest {
  static Model load(String model, String how) throws Exception {
    switch (how) {
      case "bytes":
        return Model.load(Fixture.runtime(), Fixture.bytes(model));
      case "buffer":
        return Model.load(Fixture.runtime(), Fixture.direct(Fixture.bytes(model)));
      default:
        return Model.load(Fixture.runtime(), Fixture.path(model + ".xnn").toString());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"bireal bytes", "bireal buffer", "bireal path", "vehicle bytes", "vehicle buffer",
      "vehicle path", "tiny bytes", "tiny buffer", "tiny path"})
  void outputsMatchTheHostReference(String testCase) throws Exception {
    String[] c = testCase.split(" ");
    String model = c[0];
    try (Model m = load(model, c[1])) {
      Map<String, float[]> inputs = Fixture.inputs(model);
      Map<String, float[]> outputs = m.run(inputs);
      assertEquals(Fixture.io(model, false).size(), outputs.size());
      for (Fixture.Io out : Fixture.io(model, false)) {
        Fixture.assertOutput(model, out.name, outputs.get(out.name));
      }
      if (inputs.size() == 1) {
        float[] x = inputs.values().iterator().next();
        String first = m.outputs().get(0).name();
        Fixture.assertOutput(model, first, m.run(x));
        Fixture.assertOutput(model, first, m.run(Fixture.directFloats(x)));
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"bireal", "vehicle", "tiny"})
  void inputsAndOutputsAreTheGraphs(String model) throws Exception {
    try (Model m = load(model, "bytes")) {
      for (boolean in : new boolean[] {true, false}) {
        List<Fixture.Io> want = Fixture.io(model, in);
        List<TensorInfo> got = in ? m.inputs() : m.outputs();
        assertEquals(want.size(), got.size());
        for (int i = 0; i < want.size(); ++i) {
          assertEquals(want.get(i).name, got.get(i).name());
          assertArrayEquals(want.get(i).shape, got.get(i).shape());
          assertEquals(want.get(i).type, got.get(i).type());
          assertEquals(Arrays.stream(want.get(i).shape).reduce(1, (a, b) -> a * b), got.get(i).size());
        }
      }
    }
    try (Model m = load("tiny", "path")) {
      assertEquals(ElementType.BITS, m.outputs().get(1).type(), "tiny's sign is bits");
    }
  }

  @Test
  void runsIntoTheCallersBufferAtItsPosition() throws Exception {
    try (Model m = load("vehicle", "bytes")) {
      float[] x = Fixture.inputs("vehicle").get("input");
      int n = m.outputs().get(0).size();
      FloatBuffer out = Fixture.directFloats(n + 3);
      out.position(2);
      out.put(0, 7.0f);
      out.put(n + 2, 9.0f);
      FloatBuffer in = Fixture.directFloats(x.length + 1);
      in.position(1);
      in.put(x).position(1);
      m.run(in, out);
      assertEquals(2, out.position(), "the output's position is left as it was");
      assertEquals(1, in.position(), "the input's position is left as it was");
      float[] got = new float[n];
      out.get(got);
      Fixture.assertOutput("vehicle", "output", got);
      assertEquals(7.0f, out.get(0), "values before the position are untouched");
      assertEquals(9.0f, out.get(n + 2), "values after the output are untouched");
    }
  }

  @Test
  void bitsOutputsAreMinusOneAndPlusOne() throws Exception {
    try (Model m = load("tiny", "bytes")) {
      float[] sign = m.run(Fixture.inputs("tiny")).get("sign");
      Set<Float> values = new HashSet<>();
      for (float v : sign) {
        values.add(v);
      }
      assertEquals(new HashSet<>(Arrays.asList(-1.0f, 1.0f)), values);
    }
  }

  // The negative control: a changed input must change the outputs, so the comparisons above can fail.
  @ParameterizedTest
  @ValueSource(strings = {"bireal", "vehicle", "tiny"})
  void aPerturbedInputGivesOtherOutputs(String model) throws Exception {
    try (Model m = load(model, "bytes")) {
      Map<String, float[]> inputs = Fixture.inputs(model);
      for (float[] x : inputs.values()) {
        for (int i = 0; i < x.length; ++i) {
          x[i] = model.equals("vehicle") ? 255 - x[i] : -x[i];
        }
      }
      String first = m.outputs().get(0).name();
      float[] got = m.run(inputs).get(first);
      assertFalse(Arrays.equals(Fixture.expected(model, first), got), model + ": the outputs did not change");
      assertThrowsAssertion(() -> Fixture.assertOutput(model, first, got));
    }
  }

  private static void assertThrowsAssertion(ThrowingRunnable check) throws Exception {
    try {
      check.run();
    } catch (AssertionError expected) {
      return;
    }
    throw new AssertionError("the comparison accepted a perturbed output");
  }

  interface ThrowingRunnable {
    void run() throws Exception;
  }

  @ParameterizedTest
  @ValueSource(strings = {"bireal", "vehicle"})
  void planAndNodeTimesNameTheGraphsNodes(String model) throws Exception {
    List<String> nodes = Fixture.nodes(model);
    try (Model m = load(model, "bytes")) {
      String plan = m.plan();
      assertFalse(plan.isEmpty());
      assertTrue(m.lastNodeTimes().isEmpty(), "no times before the first run");
      m.run(Fixture.inputs(model));
      Map<String, Double> times = m.lastNodeTimes();
      assertFalse(times.isEmpty());
      Set<String> covered = new HashSet<>();
      for (Map.Entry<String, Double> t : times.entrySet()) {
        assertTrue(plan.contains(t.getKey()), "step " + t.getKey() + " is not in the plan:\n" + plan);
        assertTrue(t.getValue() >= 0, t.getKey() + ": " + t.getValue() + " ms");
        for (String node : t.getKey().split("[+&]")) {
          assertTrue(nodes.contains(node), node + " (of step " + t.getKey() + ") is no node of " + model);
          covered.add(node);
        }
      }
      assertTrue(covered.size() > times.size() / 2, "steps cover nodes: " + covered);
    }
  }

  @Test
  void runtimeSaysWhatItOpened() {
    assertFalse(Fixture.runtime().deviceName().isEmpty());
    assertNotEquals(Variant.AUTO, Fixture.runtime().variant());
  }
}
