// SPDX-License-Identifier: Apache-2.0
// The native side of org.xnorcl (java/src/main/java/org/xnorcl): Runtime and Model handles are jlong pointers
// to C++ objects that Java owns and frees in close(). The Java classes check arguments and serialize calls on
// a handle; this file turns Java values into xnorcl calls and every C++ exception into the matching Java one.
//
// Rules every entry point follows: all of its work runs inside guarded(), which catches every C++ exception
// and leaves exactly one Java exception pending; a JNI call that leaves one pending throws JavaPending, so no
// further JNI call runs with an exception pending; local references made in loops are deleted in the loop.
#include <jni.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "xnorcl/xnorcl.hpp"

// Built on the desktop, javac's generated headers declare every native method, so a signature that drifts
// from the Java side fails the build here rather than at run time (UnsatisfiedLinkError).
#if __has_include("org_xnorcl_Model.h")
#include "org_xnorcl_Model.h"
#include "org_xnorcl_Runtime.h"
#endif

namespace {

using namespace xnorcl;

// A Java exception is pending (a JNI call failed): unwind to the entry point and return to Java.
struct JavaPending {};

void check(JNIEnv* env) {
  if (env->ExceptionCheck()) throw JavaPending{};
}

template <class T>
T checked(JNIEnv* env, T value) {
  if (value == nullptr) {
    check(env);
    throw Error("JNI: a call returned null without an exception");
  }
  return value;
}

// Java strings are UTF-16, C++ messages and paths UTF-8. NewStringUTF would take *modified* UTF-8 only, and
// a path with a character outside the BMP would be mangled, so both directions convert here.
std::u16string utf16(const std::string& s) {
  std::u16string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const int extra = b < 0x80 ? 0 : (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : -1;
    char32_t c = extra == 0 ? b : extra == 1 ? (b & 0x1F) : extra == 2 ? (b & 0x0F) : (b & 0x07);
    bool valid = extra >= 0 && i + static_cast<std::size_t>(extra) < s.size() + (extra == 0 ? 1 : 0);
    for (int k = 1; valid && k <= extra; ++k) {
      const auto cont = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      valid = (cont & 0xC0) == 0x80;
      c = (c << 6) | (cont & 0x3F);
    }
    if (!valid || c > 0x10FFFF) {  // an invalid byte becomes U+FFFD, as in every lenient decoder
      out.push_back(u'\uFFFD');
      ++i;
      continue;
    }
    if (c >= 0x10000) {
      c -= 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (c >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (c & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(c));
    }
    i += static_cast<std::size_t>(extra) + 1;
  }
  return out;
}

jstring java_string(JNIEnv* env, const std::string& s) {
  const std::u16string u = utf16(s);
  return checked(env, env->NewString(reinterpret_cast<const jchar*>(u.data()), static_cast<jsize>(u.size())));
}

std::string native_string(JNIEnv* env, jstring s) {
  const jsize n = env->GetStringLength(s);
  std::u16string u(static_cast<std::size_t>(n), u'\0');
  env->GetStringRegion(s, 0, n, reinterpret_cast<jchar*>(u.data()));
  check(env);
  std::string out;
  for (std::size_t i = 0; i < u.size(); ++i) {
    char32_t c = u[i];
    if (c >= 0xD800 && c < 0xDC00 && i + 1 < u.size() && u[i + 1] >= 0xDC00 && u[i + 1] < 0xE000)
      c = 0x10000 + ((c - 0xD800) << 10) + (u[++i] - 0xDC00);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

// Throws a new `cls` built by the constructor `signature` from the message and `extra` arguments. Called
// with no exception pending; if building it fails, that failure (OutOfMemoryError, say) is what stays
// pending.
template <class... Extra>
void throw_java(JNIEnv* env, const char* cls, const char* signature, const std::string& message,
                Extra... extra) {
  try {
    jclass c = checked(env, env->FindClass(cls));
    jmethodID constructor = checked(env, env->GetMethodID(c, "<init>", signature));
    jstring m = java_string(env, message);
    auto e = static_cast<jthrowable>(checked(env, env->NewObject(c, constructor, m, extra...)));
    env->Throw(e);
  } catch (const JavaPending&) {
  } catch (...) {
    env->ThrowNew(env->FindClass("java/lang/OutOfMemoryError"), "xnorcl: no memory for an exception");
  }
}

void throw_plain(JNIEnv* env, const char* cls, const std::string& message) {
  throw_java(env, cls, "(Ljava/lang/String;)V", message);
}

// Runs one entry point's work; maps whatever it throws to the Java exception of the same meaning.
template <class F>
auto guarded(JNIEnv* env, F&& work) -> decltype(work()) {
  using R = decltype(work());
  try {
    return work();
  } catch (const JavaPending&) {
  } catch (const BuildError& e) {
    try {
      const jstring log = java_string(env, e.build_log());
      throw_java(env, "org/xnorcl/BuildException", "(Ljava/lang/String;Ljava/lang/String;)V", e.what(), log);
    } catch (...) {  // pending already, or no memory for the log: see below
    }
  } catch (const OpenCLError& e) {
    try {
      const jstring call = java_string(env, e.call());
      throw_java(env, "org/xnorcl/OpenCLException", "(Ljava/lang/String;ILjava/lang/String;)V", e.what(),
                 static_cast<jint>(e.code()), call);
    } catch (...) {
    }
  } catch (const DeviceNotFound& e) {
    throw_plain(env, "org/xnorcl/DeviceNotFoundException", e.what());
  } catch (const InvalidArgument& e) {
    throw_plain(env, "org/xnorcl/InvalidArgumentException", e.what());
  } catch (const std::bad_alloc&) {
    throw_plain(env, "java/lang/OutOfMemoryError", "xnorcl: out of native memory");
  } catch (const std::exception& e) {
    throw_plain(env, "org/xnorcl/XnorclException", e.what());
  } catch (...) {
    throw_plain(env, "org/xnorcl/XnorclException", "xnorcl: an unknown native exception");
  }
  // Java must never see a failed call return without an exception.
  if (!env->ExceptionCheck())
    env->ThrowNew(env->FindClass("java/lang/OutOfMemoryError"), "xnorcl: no memory for an exception");
  if constexpr (std::is_void_v<R>) {
    return;
  } else {
    return R{};
  }
}

struct NativeModel {
  Model model;
  std::vector<std::pair<std::string, TensorInfo>> inputs;
  std::vector<std::pair<std::string, TensorInfo>> outputs;

  NativeModel(const Runtime& runtime, Graph graph)
      : model(runtime, std::move(graph)), inputs(model.input_infos()), outputs(model.output_infos()) {}
};

Runtime& runtime_of(jlong handle) {
  return *reinterpret_cast<Runtime*>(static_cast<std::intptr_t>(handle));
}
NativeModel& model_of(jlong handle) {
  return *reinterpret_cast<NativeModel*>(static_cast<std::intptr_t>(handle));
}
template <class T>
jlong handle_of(T* p) {
  return static_cast<jlong>(reinterpret_cast<std::intptr_t>(p));
}

// The image inputs as Model.java's Images passes them: names, two ordinals each (org.xnorcl.ImageInput's
// Format and Order, declared in the order of xnorcl::PixelFormat and ChannelOrder), six floats each.
struct ImageSpecs {
  jobjectArray names;
  jintArray kinds;
  jfloatArray values;
};

Graph with_images(JNIEnv* env, Graph graph, const ImageSpecs& images) {
  const jsize n = env->GetArrayLength(images.names);
  if (env->GetArrayLength(images.kinds) != 2 * n || env->GetArrayLength(images.values) != 6 * n)
    throw InvalidArgument("image inputs: the names, kinds and values disagree in number");
  std::vector<jint> kinds(static_cast<std::size_t>(2 * n));
  std::vector<jfloat> values(static_cast<std::size_t>(6 * n));
  env->GetIntArrayRegion(images.kinds, 0, 2 * n, kinds.data());
  env->GetFloatArrayRegion(images.values, 0, 6 * n, values.data());
  check(env);
  for (jsize i = 0; i < n; ++i) {
    auto name = static_cast<jstring>(env->GetObjectArrayElement(images.names, i));
    check(env);
    const std::string input = native_string(env, name);
    env->DeleteLocalRef(name);
    const auto k = static_cast<std::size_t>(2 * i), v = static_cast<std::size_t>(6 * i);
    if (kinds[k] < 0 || kinds[k] > 3 || kinds[k + 1] < 0 || kinds[k + 1] > 1)
      throw InvalidArgument("image input '" + input + "': an unknown format or order");
    ImageInput image;
    image.format = static_cast<PixelFormat>(kinds[k]);
    image.order = static_cast<ChannelOrder>(kinds[k + 1]);
    for (std::size_t c = 0; c < 3; ++c) {
      image.mean[c] = values[v + c];
      image.scale[c] = values[v + 3 + c];
    }
    graph = with_image_input(std::move(graph), input, image);
  }
  return graph;
}

jlong load(JNIEnv* env, jlong runtime, Graph graph, const ImageSpecs& images) {
  return handle_of(new NativeModel(runtime_of(runtime), with_images(env, std::move(graph), images)));
}

std::int64_t element_count(const Dims& dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  return n;
}

// A bits tensor as the floats its bits stand for: -1 or +1, NCHW of its logical shape ([N, C] is [N, C, 1,
// 1]).
std::vector<float> output_values(Tensor&& t) {
  if (t.type != ElementType::Bits) return std::move(t.values);
  Shape s{1, 1, 1, 1};
  for (std::size_t i = 0; i < t.dims.size() && i < 4; ++i) s[i] = t.dims[i];
  std::vector<float> v = unpack_activations(t.words.data(), s);  // 1 and 0
  for (float& x : v) x = 2 * x - 1;
  return v;
}

// The float* of a direct FloatBuffer at `position`, with room for `count` values (Java checked; this guards
// the native side against a buffer that changed in between).
float* buffer_floats(JNIEnv* env, jobject buffer, jint position, std::int64_t count,
                     const std::string& what) {
  auto* base = static_cast<float*>(env->GetDirectBufferAddress(buffer));
  const jlong capacity = env->GetDirectBufferCapacity(buffer);
  check(env);
  if (base == nullptr || capacity < 0)
    throw InvalidArgument(what + ": the FloatBuffer is not direct (no native address)");
  if (position < 0 || capacity - position < count)
    throw InvalidArgument(what + ": " + std::to_string(count) + " values needed at position " +
                          std::to_string(position) + ", the buffer holds " + std::to_string(capacity));
  return base + position;
}

}  // namespace

extern "C" {

// --- org.xnorcl.Runtime
// -------------------------------------------------------------------------------------

JNIEXPORT jlong JNICALL Java_org_xnorcl_Runtime_nativeCreate(JNIEnv* env, jclass, jstring device,
                                                             jint variant, jstring cache_dir) {
  return guarded(env, [&] {
    RuntimeOptions o;
    if (device != nullptr) o.device = native_string(env, device);
    if (variant >= 0) o.variant = static_cast<Variant>(variant);
    if (cache_dir != nullptr) o.cache_dir = native_string(env, cache_dir);
    return handle_of(new Runtime(Runtime::create(o)));
  });
}

JNIEXPORT jstring JNICALL Java_org_xnorcl_Runtime_nativeDeviceName(JNIEnv* env, jclass, jlong handle) {
  return guarded(env, [&] { return java_string(env, runtime_of(handle).device_name()); });
}

JNIEXPORT jint JNICALL Java_org_xnorcl_Runtime_nativeVariant(JNIEnv* env, jclass, jlong handle) {
  return guarded(env, [&] { return static_cast<jint>(runtime_of(handle).variant()); });
}

JNIEXPORT void JNICALL Java_org_xnorcl_Runtime_nativeDestroy(JNIEnv* env, jclass, jlong handle) {
  guarded(env, [&] { delete &runtime_of(handle); });
}

// --- org.xnorcl.Model: loading
// ------------------------------------------------------------------------------

JNIEXPORT jlong JNICALL Java_org_xnorcl_Model_nativeLoadBytes(JNIEnv* env, jclass, jlong runtime,
                                                              jbyteArray bytes, jobjectArray image_names,
                                                              jintArray image_kinds,
                                                              jfloatArray image_values) {
  return guarded(env, [&] {
    const jsize size = env->GetArrayLength(bytes);
    Graph graph;
    {
      // Parsed in place: no copy of a large model, and no JNI call until the array is released (the
      // destructor releases it when load_graph throws, too).
      struct Critical {
        JNIEnv* env;
        jbyteArray array;
        void* data;
        ~Critical() {
          if (data != nullptr) env->ReleasePrimitiveArrayCritical(array, data, JNI_ABORT);
        }
      } critical{env, bytes, size == 0 ? nullptr : env->GetPrimitiveArrayCritical(bytes, nullptr)};
      if (size != 0 && critical.data == nullptr) throw JavaPending{};
      graph = load_graph(critical.data, static_cast<std::size_t>(size));
    }
    return load(env, runtime, std::move(graph), {image_names, image_kinds, image_values});
  });
}

JNIEXPORT jlong JNICALL Java_org_xnorcl_Model_nativeLoadBuffer(JNIEnv* env, jclass, jlong runtime,
                                                               jobject bytes, jint position, jint length,
                                                               jobjectArray image_names,
                                                               jintArray image_kinds,
                                                               jfloatArray image_values) {
  return guarded(env, [&] {
    auto* base = static_cast<const unsigned char*>(env->GetDirectBufferAddress(bytes));
    const jlong capacity = env->GetDirectBufferCapacity(bytes);
    check(env);
    if (base == nullptr && capacity != 0) throw InvalidArgument("model bytes: the ByteBuffer is not direct");
    if (position < 0 || length < 0 || capacity - position < length)
      throw InvalidArgument("model bytes: " + std::to_string(length) + " bytes at position " +
                            std::to_string(position) + " exceed the buffer's " + std::to_string(capacity));
    return load(env, runtime,
                load_graph(length == 0 ? nullptr : base + position, static_cast<std::size_t>(length)),
                {image_names, image_kinds, image_values});
  });
}

JNIEXPORT jlong JNICALL Java_org_xnorcl_Model_nativeLoadPath(JNIEnv* env, jclass, jlong runtime, jstring path,
                                                             jobjectArray image_names, jintArray image_kinds,
                                                             jfloatArray image_values) {
  return guarded(env, [&] {
    return load(env, runtime, load_graph(native_string(env, path)), {image_names, image_kinds, image_values});
  });
}

JNIEXPORT jobjectArray JNICALL Java_org_xnorcl_Model_nativeInfo(JNIEnv* env, jclass, jlong handle,
                                                                jboolean outputs) {
  return guarded(env, [&]() -> jobjectArray {
    const NativeModel& m = model_of(handle);
    const std::vector<std::pair<std::string, TensorInfo>>& infos = outputs ? m.outputs : m.inputs;
    const auto n = static_cast<jsize>(infos.size());
    jclass string_class = checked(env, env->FindClass("java/lang/String"));
    jclass long_array_class = checked(env, env->FindClass("[J"));
    jclass object_class = checked(env, env->FindClass("java/lang/Object"));
    jobjectArray names = checked(env, env->NewObjectArray(n, string_class, nullptr));
    jobjectArray shapes = checked(env, env->NewObjectArray(n, long_array_class, nullptr));
    jintArray types = checked(env, env->NewIntArray(n));
    for (jsize i = 0; i < n; ++i) {
      const auto& [name, info] = infos[static_cast<std::size_t>(i)];
      jstring s = java_string(env, name);
      env->SetObjectArrayElement(names, i, s);
      env->DeleteLocalRef(s);
      check(env);
      const std::vector<jlong> dims(info.dims.begin(), info.dims.end());
      jlongArray shape = checked(env, env->NewLongArray(static_cast<jsize>(dims.size())));
      env->SetLongArrayRegion(shape, 0, static_cast<jsize>(dims.size()), dims.data());
      check(env);
      env->SetObjectArrayElement(shapes, i, shape);
      env->DeleteLocalRef(shape);
      check(env);
      // org.xnorcl.ElementType's ordinals
      const jint type = info.type == ElementType::Bits ? 1 : info.type == ElementType::UInt8 ? 2 : 0;
      env->SetIntArrayRegion(types, i, 1, &type);
      check(env);
    }
    jobjectArray result = checked(env, env->NewObjectArray(3, object_class, nullptr));
    const jobject parts[] = {names, shapes, types};
    for (jsize i = 0; i < 3; ++i) {
      env->SetObjectArrayElement(result, i, parts[i]);
      check(env);
    }
    return result;
  });
}

// --- org.xnorcl.Model: running
// ------------------------------------------------------------------------------

JNIEXPORT jobjectArray JNICALL Java_org_xnorcl_Model_nativeRun(JNIEnv* env, jclass, jlong handle,
                                                               jobjectArray arrays, jobjectArray buffers,
                                                               jintArray positions, jboolean all,
                                                               jobject into, jint into_position) {
  return guarded(env, [&]() -> jobjectArray {
    NativeModel& m = model_of(handle);
    const auto count = static_cast<jsize>(m.inputs.size());
    if (env->GetArrayLength(arrays) != count || env->GetArrayLength(buffers) != count ||
        env->GetArrayLength(positions) != count)
      throw InvalidArgument("run: " + std::to_string(count) + " inputs expected");
    std::vector<jint> starts(static_cast<std::size_t>(count));
    env->GetIntArrayRegion(positions, 0, count, starts.data());
    check(env);

    std::map<std::string, Tensor> inputs;
    for (jsize i = 0; i < count; ++i) {
      const auto& [name, info] = m.inputs[static_cast<std::size_t>(i)];
      if (info.type == ElementType::UInt8)
        throw InvalidArgument("input '" + name + "' is an image (u8 " + to_string(info.dims) +
                              "): run it with run(byte[]) or run(ByteBuffer)");
      Tensor t;
      t.dims = info.dims;
      t.values.resize(static_cast<std::size_t>(element_count(info.dims)));
      const auto size = static_cast<jsize>(t.values.size());
      auto array = static_cast<jfloatArray>(env->GetObjectArrayElement(arrays, i));
      check(env);
      if (array != nullptr) {
        const jsize length = env->GetArrayLength(array);
        if (length == size) env->GetFloatArrayRegion(array, 0, size, t.values.data());
        env->DeleteLocalRef(array);
        check(env);
        if (length != size)
          throw InvalidArgument("input '" + name + "': " + std::to_string(size) + " values expected, got " +
                                std::to_string(length));
      } else {
        jobject buffer = env->GetObjectArrayElement(buffers, i);
        check(env);
        if (buffer == nullptr) throw InvalidArgument("input '" + name + "' is not given");
        const float* data = nullptr;
        try {
          data =
              buffer_floats(env, buffer, starts[static_cast<std::size_t>(i)], size, "input '" + name + "'");
        } catch (...) {
          env->DeleteLocalRef(buffer);
          throw;
        }
        std::memcpy(t.values.data(), data, t.values.size() * sizeof(float));
        env->DeleteLocalRef(buffer);
      }
      inputs.emplace(name, std::move(t));
    }

    std::map<std::string, Tensor> outputs = m.model.run(inputs);

    if (into != nullptr) {
      const auto& [name, info] = m.outputs.front();
      std::vector<float> values = output_values(std::move(outputs.at(name)));
      float* out = buffer_floats(env, into, into_position, static_cast<std::int64_t>(values.size()),
                                 "output '" + name + "'");
      std::memcpy(out, values.data(), values.size() * sizeof(float));
      return nullptr;
    }
    const auto returned = static_cast<jsize>(all ? m.outputs.size() : 1);
    jclass float_array_class = checked(env, env->FindClass("[F"));
    jobjectArray result = checked(env, env->NewObjectArray(returned, float_array_class, nullptr));
    for (jsize i = 0; i < returned; ++i) {
      const std::string& name = m.outputs[static_cast<std::size_t>(i)].first;
      const std::vector<float> values = output_values(std::move(outputs.at(name)));
      const auto size = static_cast<jsize>(values.size());
      jfloatArray array = checked(env, env->NewFloatArray(size));
      env->SetFloatArrayRegion(array, 0, size, values.data());
      check(env);
      env->SetObjectArrayElement(result, i, array);
      env->DeleteLocalRef(array);
      check(env);
    }
    return result;
  });
}

JNIEXPORT jfloatArray JNICALL Java_org_xnorcl_Model_nativeRunImage(JNIEnv* env, jclass, jlong handle,
                                                                   jbyteArray array, jobject buffer,
                                                                   jint position) {
  return guarded(env, [&]() -> jfloatArray {
    NativeModel& m = model_of(handle);
    if (m.inputs.size() != 1 || m.inputs[0].second.type != ElementType::UInt8)
      throw InvalidArgument("run(pixels): the model's only input must be an image");
    const auto& [name, info] = m.inputs[0];
    Tensor t;
    t.dims = info.dims;
    t.type = ElementType::UInt8;
    t.bytes.resize(static_cast<std::size_t>(element_count(info.dims)));
    const auto size = static_cast<jsize>(t.bytes.size());
    if (array != nullptr) {
      if (env->GetArrayLength(array) != size)
        throw InvalidArgument("input '" + name + "': " + std::to_string(size) + " bytes expected, got " +
                              std::to_string(env->GetArrayLength(array)));
      env->GetByteArrayRegion(array, 0, size, reinterpret_cast<jbyte*>(t.bytes.data()));
      check(env);
    } else {
      const auto* base = static_cast<const std::uint8_t*>(env->GetDirectBufferAddress(buffer));
      const jlong capacity = env->GetDirectBufferCapacity(buffer);
      check(env);
      if (base == nullptr || capacity < 0)
        throw InvalidArgument("input '" + name + "': the ByteBuffer is not direct (no native address)");
      if (position < 0 || capacity - position < size)
        throw InvalidArgument("input '" + name + "': " + std::to_string(size) + " bytes needed at position " +
                              std::to_string(position) + ", the buffer holds " + std::to_string(capacity));
      std::memcpy(t.bytes.data(), base + position, t.bytes.size());
    }
    std::map<std::string, Tensor> outputs = m.model.run({{name, std::move(t)}});
    const std::vector<float> values = output_values(std::move(outputs.at(m.outputs.front().first)));
    const auto n = static_cast<jsize>(values.size());
    jfloatArray result = checked(env, env->NewFloatArray(n));
    env->SetFloatArrayRegion(result, 0, n, values.data());
    check(env);
    return result;
  });
}

JNIEXPORT jstring JNICALL Java_org_xnorcl_Model_nativePlan(JNIEnv* env, jclass, jlong handle) {
  return guarded(env, [&] { return java_string(env, model_of(handle).model.plan().to_string()); });
}

JNIEXPORT jobjectArray JNICALL Java_org_xnorcl_Model_nativeStageTimes(JNIEnv* env, jclass, jlong handle) {
  return guarded(env, [&]() -> jobjectArray {
    const std::vector<StageTime> times = model_of(handle).model.last_stage_times();
    const auto n = static_cast<jsize>(times.size());
    jclass string_class = checked(env, env->FindClass("java/lang/String"));
    jclass object_class = checked(env, env->FindClass("java/lang/Object"));
    jobjectArray kernels = checked(env, env->NewObjectArray(n, string_class, nullptr));
    jdoubleArray ms = checked(env, env->NewDoubleArray(n));
    for (jsize i = 0; i < n; ++i) {
      const StageTime& t = times[static_cast<std::size_t>(i)];
      jstring s = java_string(env, t.kernel);
      env->SetObjectArrayElement(kernels, i, s);
      env->DeleteLocalRef(s);
      check(env);
      const jdouble v = t.milliseconds;
      env->SetDoubleArrayRegion(ms, i, 1, &v);
      check(env);
    }
    jobjectArray result = checked(env, env->NewObjectArray(2, object_class, nullptr));
    env->SetObjectArrayElement(result, 0, kernels);
    check(env);
    env->SetObjectArrayElement(result, 1, ms);
    check(env);
    return result;
  });
}

JNIEXPORT void JNICALL Java_org_xnorcl_Model_nativeDestroy(JNIEnv* env, jclass, jlong handle) {
  guarded(env, [&] { delete &model_of(handle); });
}

}  // extern "C"
