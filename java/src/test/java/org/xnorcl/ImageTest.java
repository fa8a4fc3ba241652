// SPDX-License-Identifier: Apache-2.0
package org.xnorcl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Camera frames in: a float input loaded as an RGBA image, run from bytes, against the host reference. */
class ImageTest {
  static ImageInput rgba() {
    return new ImageInput(ImageInput.Format.RGBA)
        .mean(127.5f, 127.5f, 127.5f)
        .scale(1 / 127.5f, 1 / 127.5f, 1 / 127.5f);
  }

  static Map<String, ImageInput> images(ImageInput image) {
    return Collections.singletonMap("input", image);
  }

  // The fixture's frame: byte i is (i * 7) mod 256.
  static byte[] frame(int n) {
    byte[] f = new byte[n];
    for (int i = 0; i < n; ++i) {
      f[i] = (byte) (i * 7);
    }
    return f;
  }

  static Model load(String how, ImageInput image) throws Exception {
    switch (how) {
      case "bytes":
        return Model.load(Fixture.runtime(), Fixture.bytes("bireal"), images(image));
      case "buffer":
        return Model.load(Fixture.runtime(), Fixture.direct(Fixture.bytes("bireal")), images(image));
      default:
        return Model.load(Fixture.runtime(), Fixture.path("bireal.xnn").toString(), images(image));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"bytes", "buffer", "path"})
  void aFrameRunsAsTheHostReferenceComputes(String how) throws Exception {
    try (Model m = load(how, rgba())) {
      TensorInfo in = m.inputs().get(0);
      assertEquals(ElementType.UINT8, in.type());
      assertArrayEquals(new long[] {1, 32, 32, 4}, in.shape());
      byte[] f = frame(in.size());
      Fixture.assertOutput("bireal", "frame.logits", m.run(f));
      ByteBuffer b = ByteBuffer.allocateDirect(f.length + 3);
      b.position(3);
      b.put(f);
      b.position(3);
      Fixture.assertOutput("bireal", "frame.logits", m.run(b));
      assertEquals(3, b.position());
    }
  }

  @Test
  void anotherChannelOrderGivesOtherLogits() throws Exception {
    try (Model m = load("bytes", rgba().order(ImageInput.Order.BGR))) {
      float[] got = m.run(frame(m.inputs().get(0).size()));
      assertFalse(Arrays.equals(Fixture.expected("bireal", "frame.logits"), got));
    }
  }

  @Test
  void badFramesAndImageInputsAreRefused() throws Exception {
    try (Model image = load("bytes", rgba()); Model floats = Model.load(Fixture.runtime(), Fixture.bytes("bireal"))) {
      int n = image.inputs().get(0).size();
      assertTrue(assertThrows(InvalidArgumentException.class, () -> image.run(new float[n]))
                     .getMessage()
                     .contains("is an image"));
      assertTrue(assertThrows(InvalidArgumentException.class,
          () -> image.run(Collections.singletonMap("input", new float[n])))
                     .getMessage()
                     .contains("is an image"));
      assertTrue(assertThrows(InvalidArgumentException.class, () -> image.run(new byte[n - 1]))
                     .getMessage()
                     .contains(n + " bytes expected"));
      assertTrue(assertThrows(InvalidArgumentException.class, () -> image.run(ByteBuffer.allocate(n)))
                     .getMessage()
                     .contains("not direct"));
      assertTrue(assertThrows(InvalidArgumentException.class, () -> floats.run(new byte[n]))
                     .getMessage()
                     .contains("not an image"));
    }
    assertTrue(assertThrows(InvalidArgumentException.class,
        () -> Model.load(Fixture.runtime(), Fixture.bytes("bireal"), Collections.singletonMap("frame", rgba())))
                   .getMessage()
                   .contains("'frame' is no graph input"));
    assertTrue(assertThrows(InvalidArgumentException.class, () -> load("bytes", rgba().mean(Float.NaN, 0, 0)))
                   .getMessage()
                   .contains("must be finite"));
    assertTrue(assertThrows(InvalidArgumentException.class,
        () -> Model.load(Fixture.runtime(), Fixture.bytes("tiny"), Collections.singletonMap("a", rgba())))
                   .getMessage()
                   .contains("an image becomes f32 [N, 3, H, W]"));
  }
}
