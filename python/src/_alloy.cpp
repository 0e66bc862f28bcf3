// The Python package's bindings over Alloy's C API (include/alloy.h), of two kinds.
//
// The collectives (allreduce ... recv) take the objects that Comm's methods were given and do in one call
// all that a collective needs: read each array (__cuda_array_interface__, or DLPack where that names no
// datatype Alloy has), check it, turn the stream argument into a handle, order that stream after the
// arrays' producer streams, and call Alloy once. Issue #33 bounds what the package adds to a call at
// 1.5 us; the same steps in Python cost about that alone (docs/python.md). Every argument is checked
// before anything is enqueued; refusals and the library's failures raise alloy.AlloyError.
//
// The rest are one C call each on plain integers, returning the call's alloyResult_t with its outputs;
// the package turns those codes into AlloyError.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "alloy.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

alloyComm_t commOf(uintptr_t handle) { return reinterpret_cast<alloyComm_t>(handle); }
cudaStream_t streamOf(uintptr_t handle) { return reinterpret_cast<cudaStream_t>(handle); }
const void* constPointer(uintptr_t address) { return reinterpret_cast<const void*>(address); }
void* pointer(uintptr_t address) { return reinterpret_cast<void*>(address); }

// Attribute and key names, interned once at import so that every lookup compares pointers. They live as
// long as the process: releasing them at exit would run after the interpreter has gone.
struct Names {
  PyObject *cudaArrayInterface, *dlpack, *cudaStreamProtocol, *cudaStream, *ptr;
  PyObject *shape, *typestr, *strides, *data, *stream;
  PyObject *size, *cContiguous, *dtype, *str, *exportVersion;
};
Names names;

void internNames() {
  names = {PyUnicode_InternFromString("__cuda_array_interface__"), PyUnicode_InternFromString("__dlpack__"),
           PyUnicode_InternFromString("__cuda_stream__"), PyUnicode_InternFromString("cuda_stream"),
           PyUnicode_InternFromString("ptr"), PyUnicode_InternFromString("shape"),
           PyUnicode_InternFromString("typestr"), PyUnicode_InternFromString("strides"),
           PyUnicode_InternFromString("data"), PyUnicode_InternFromString("stream"),
           PyUnicode_InternFromString("size"), PyUnicode_InternFromString("_c_contiguous"),
           PyUnicode_InternFromString("dtype"), PyUnicode_InternFromString("str"),
           PyUnicode_InternFromString("CUDA_ARRAY_INTERFACE_EXPORT_VERSION")};
}

// Raises alloy.AlloyError(code, message). The class is the package's (alloy._errors), looked up here
// rather than held: only failures pay for the lookup, and nothing outlives the interpreter.
[[noreturn]] void fail(int code, const std::string& message) {
  nb::object error = nb::module_::import_("alloy._errors").attr("AlloyError")(code, message);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw nb::python_error();
}

[[noreturn]] void invalid(const std::string& message) { fail(alloyInvalidArgument, message); }

std::string reprText(nb::handle value) { return nb::repr(value).c_str(); }

// type(value).__name__, as messages name what they got.
std::string typeName(nb::handle value) { return nb::str(nb::getattr(value.type(), "__name__")).c_str(); }

// repr(tuple(sequence)): shapes and strides in messages, written as Python writes them.
std::string tupleText(nb::handle sequence) { return reprText(nb::steal(PySequence_Tuple(sequence.ptr()))); }

// obj.name, or an invalid object where obj has no such attribute (hasattr's rule: only AttributeError
// means absent; other errors propagate).
nb::object attribute(nb::handle obj, PyObject* name) {
  PyObject* value = nullptr;
#if PY_VERSION_HEX >= 0x030D0000
  if (PyObject_GetOptionalAttr(obj.ptr(), name, &value) < 0) throw nb::python_error();
#else
  if (_PyObject_LookupAttr(obj.ptr(), name, &value) < 0) throw nb::python_error();
#endif
  return nb::steal(value);
}

// dict.get(key), borrowed from the dict: nullptr where the key is absent.
PyObject* item(nb::handle dict, PyObject* key) {
  PyObject* value = PyDict_GetItemWithError(dict.ptr(), key);
  if (value == nullptr && PyErr_Occurred()) throw nb::python_error();
  return value;
}

// An integer that must fit a pointer (an address or a stream handle); `what()` names it in the message,
// built only on failure (this runs on every call).
template <typename What>
uintptr_t handleValue(nb::handle value, What what) {
  const nb::object integer = PyLong_Check(value.ptr()) ? nb::borrow(value) : nb::steal(PyNumber_Index(value.ptr()));
  if (!integer.is_valid()) throw nb::python_error();
  // PyLong_AsUnsignedLong where it is as wide: PyLong_AsUnsignedLongLong goes through a byte array, a
  // large part of a call's cost (five handles are read per allreduce).
  static_assert(sizeof(unsigned long) == sizeof(uintptr_t) || sizeof(unsigned long long) == sizeof(uintptr_t));
  using Unsigned = std::conditional_t<sizeof(unsigned long) == sizeof(uintptr_t), unsigned long, unsigned long long>;
  const Unsigned result = sizeof(unsigned long) == sizeof(uintptr_t) ? PyLong_AsUnsignedLong(integer.ptr())
                                                                     : PyLong_AsUnsignedLongLong(integer.ptr());
  if (result == static_cast<Unsigned>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    invalid(what() + " " + reprText(value) + " is out of range (expected an int from 0 to 2**64 - 1)");
  }
  return static_cast<uintptr_t>(result);
}

std::string streamArgument() { return "stream:"; }

// The entries of a shape or strides (ints, as int() takes them).
std::vector<int64_t> integers(nb::handle sequence) {
  std::vector<int64_t> result;
  for (nb::handle entry : sequence) result.push_back(nb::cast<int64_t>(entry));
  return result;
}

// Datatypes: their names in messages (DataType's, lower case) and sizes.
struct TypeInfo {
  const char* name;
  int64_t itemsize;
};
constexpr TypeInfo kTypes[alloyNumTypes] = {
    {"int8", 1},    {"uint8", 1},   {"int32", 4},   {"uint32", 4},    {"int64", 8},           {"uint64", 8},
    {"float16", 2}, {"float32", 4}, {"float64", 8}, {"bfloat16", 2}, {"float8_e4m3", 1}, {"float8_e5m2", 1},
};

// A __cuda_array_interface__ typestr -> datatype: byte order '<', '|' or '=' (this machine's), then kind and
// size. bfloat16 and the float8 formats have no typestr of their own ('<V2', '|V1'): false, and such arrays
// are read through DLPack.
bool fromTypestr(nb::handle typestr, alloyDataType_t* type) {
  if (!PyUnicode_Check(typestr.ptr())) return false;
  Py_ssize_t length = 0;
  const char* s = PyUnicode_AsUTF8AndSize(typestr.ptr(), &length);
  if (s == nullptr) {
    PyErr_Clear();  // not UTF-8 encodable: no typestr Alloy knows
    return false;
  }
  if (length != 3 || (s[0] != '<' && s[0] != '|' && s[0] != '=')) return false;
  struct Entry {
    char kind, size;
    alloyDataType_t type;
  };
  static constexpr Entry kTypestr[] = {
      {'i', '1', alloyInt8},   {'u', '1', alloyUint8},   {'i', '4', alloyInt32},
      {'u', '4', alloyUint32}, {'i', '8', alloyInt64},   {'u', '8', alloyUint64},
      {'f', '2', alloyFloat16}, {'f', '4', alloyFloat32}, {'f', '8', alloyFloat64},
  };
  for (const Entry& e : kTypestr) {
    if (e.kind == s[1] && e.size == s[2]) {
      *type = e.type;
      return true;
    }
  }
  return false;
}

// DLPack (type code, bits, lanes) -> datatype; codes (dlpack.h 1.1): 0 int, 1 uint, 2 float, 4 bfloat,
// 10 float8 e4m3fn (CUDA's __nv_fp8_e4m3), 12 float8 e5m2.
bool fromDlpack(const nb::dlpack::dtype& t, alloyDataType_t* type) {
  struct Entry {
    uint8_t code, bits;
    alloyDataType_t type;
  };
  static constexpr Entry kDlpack[] = {
      {0, 8, alloyInt8},      {1, 8, alloyUint8},     {0, 32, alloyInt32},       {1, 32, alloyUint32},
      {0, 64, alloyInt64},    {1, 64, alloyUint64},   {2, 16, alloyFloat16},     {2, 32, alloyFloat32},
      {2, 64, alloyFloat64},  {4, 16, alloyBfloat16}, {10, 8, alloyFloat8e4m3}, {12, 8, alloyFloat8e5m2},
  };
  if (t.lanes != 1) return false;
  for (const Entry& e : kDlpack) {
    if (e.code == t.code && e.bits == t.bits) {
      *type = e.type;
      return true;
    }
  }
  return false;
}

// Whether byte strides describe a compact row-major layout of shape: extents of 1 take any stride, an
// array without elements is compact, and shape and strides pair from their last entries.
bool compact(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t itemsize) {
  for (int64_t extent : shape)
    if (extent == 0) return true;
  int64_t expected = itemsize;
  for (size_t i = shape.size(), j = strides.size(); i > 0 && j > 0; --i, --j) {
    if (shape[i - 1] != 1 && strides[j - 1] != expected) return false;
    expected *= shape[i - 1];
  }
  return true;
}

// A contiguous array in device memory, as Alloy takes it.
struct Array {
  uintptr_t address = 0;
  alloyDataType_t type = alloyFloat32;
  size_t count = 0;        // elements
  bool named = false;      // whether __cuda_array_interface__ (v3) names the producer's stream
  uintptr_t producer = 0;  // that stream
};

// An optional array not given (reduce's recvbuf off the root, alltoallv's relaybuf): address 0.
const Array kAbsent{};

// CuPy's arrays read from their attributes: CuPy builds __cuda_array_interface__ as a new dict on every
// read (0.54 us each on the GPU machine, half of what the package added to an 8-byte allreduce). The
// fields are the interface's, from the attributes it is built from (CuPy 13.6 and 14, cupy/_core/core.pyx):
// `data.ptr`, `size`, `dtype`, and for the stream (export version 3, the default) the current stream's
// handle, or the default stream's where that is 0; version 2 names none. Only an exact cupy.ndarray, only
// where it is C-contiguous, holds elements and has a datatype the table knows: anything else goes through
// the interface, whose messages say what is wrong. CuPy is looked up in sys.modules, never imported here.
class CupyArrays {
 public:
  // Whether obj is a CuPy array this reader takes.
  bool takes(nb::handle obj) {
    if (ndarray_ == nullptr && !lookUp()) return false;
    return Py_TYPE(obj.ptr()) == reinterpret_cast<PyTypeObject*>(ndarray_);
  }
  // A cupy.cuda.Stream's or ExternalStream's handle, read from `ptr`, which is what their __cuda_stream__
  // returns beside version 0 (cupy/cuda/stream.pyx): one attribute read in place of a call of that Python
  // method and the unpacking of its tuple. False for any other object, subclasses included (they may
  // override the protocol).
  bool streamPointer(nb::handle stream, uintptr_t* handle) {
    if (ndarray_ == nullptr && !lookUp()) return false;
    PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(stream.ptr()));
    if (type != stream_ && type != externalStream_) return false;
    const nb::object ptr = attribute(stream, names.ptr);
    if (!ptr.is_valid() || !PyLong_Check(ptr.ptr())) return false;
    *handle = handleValue(ptr, [] { return std::string("stream: ptr"); });
    return true;
  }
  // obj's address, datatype and element count; false (nothing raised) where the interface must read it.
  bool read(nb::handle obj, Array* a) {
    const nb::object contiguous = attribute(obj, names.cContiguous);
    if (!contiguous.is_valid() || contiguous.ptr() != Py_True) return false;
    const nb::object size = attribute(obj, names.size);
    if (!size.is_valid() || !PyLong_Check(size.ptr())) return false;
    const long long count = PyLong_AsLongLong(size.ptr());
    if (count <= 0) {
      PyErr_Clear();
      return false;
    }
    if (!typeOf(attribute(obj, names.dtype), &a->type)) return false;
    const nb::object data = attribute(obj, names.data);
    const nb::object address = data.is_valid() ? attribute(data, names.ptr) : nb::object();
    if (!address.is_valid() || !PyLong_Check(address.ptr())) return false;
    a->address = handleValue(address, [] { return std::string("data.ptr"); });
    a->count = static_cast<size_t>(count);
    return true;
  }
  // The stream the interface would name: *named false under export version 2. False where the version
  // is neither (the interface raises CuPy's own error then).
  bool stream(bool* named, uintptr_t* handle) {
    const nb::object version = attribute(util_, names.exportVersion);
    const long v = version.is_valid() && PyLong_Check(version.ptr()) ? PyLong_AsLong(version.ptr()) : -1;
    if (v == 2) {
      *named = false;
      return true;
    }
    if (v != 3) {
      PyErr_Clear();
      return false;
    }
    const nb::object current = nb::steal(PyObject_CallNoArgs(currentStream_));
    if (!current.is_valid()) throw nb::python_error();
    *handle = handleValue(attribute(current, names.ptr), [] { return std::string("cupy's current stream"); });
    if (*handle == 0) {
      const nb::object fallback = nb::steal(PyObject_CallNoArgs(defaultStreamPtr_));
      if (!fallback.is_valid()) throw nb::python_error();
      *handle = handleValue(fallback, [] { return std::string("cupy's default stream"); });
    }
    *named = true;
    return true;
  }

 private:
  // cupy.ndarray and the functions the interface's stream comes from, once CuPy is imported. Held for the
  // process's life, as the interned names are.
  bool lookUp() {
    PyObject* cupy = PyDict_GetItemString(PyImport_GetModuleDict(), "cupy");
    if (cupy == nullptr) return false;
    PyObject* ndarray = PyObject_GetAttrString(cupy, "ndarray");
    PyObject* util = PyImport_ImportModule("cupy._util");
    PyObject* cuda = PyImport_ImportModule("cupy.cuda");
    PyObject* current = cuda != nullptr ? PyObject_GetAttrString(cuda, "get_current_stream") : nullptr;
    // The stream classes are optional: without them streams go through their protocol.
    PyObject* stream = cuda != nullptr ? PyObject_GetAttrString(cuda, "Stream") : nullptr;
    PyObject* external = cuda != nullptr ? PyObject_GetAttrString(cuda, "ExternalStream") : nullptr;
    PyErr_Clear();
    PyObject* backend = PyImport_ImportModule("cupy_backends.cuda.stream");
    PyObject* fallback = backend != nullptr ? PyObject_GetAttrString(backend, "get_default_stream_ptr") : nullptr;
    Py_XDECREF(cuda);
    Py_XDECREF(backend);
    if (ndarray == nullptr || util == nullptr || current == nullptr || fallback == nullptr ||
        !PyType_Check(ndarray)) {
      PyErr_Clear();  // a CuPy without them: every array goes through the interface
      Py_XDECREF(ndarray), Py_XDECREF(util), Py_XDECREF(current), Py_XDECREF(fallback);
      Py_XDECREF(stream), Py_XDECREF(external);
      ndarray_ = Py_None;
      return false;
    }
    ndarray_ = ndarray, util_ = util, currentStream_ = current, defaultStreamPtr_ = fallback;
    stream_ = typeOrNull(stream);
    externalStream_ = typeOrNull(external);
    return true;
  }
  // obj where it is a type, else nullptr (and obj released).
  static PyObject* typeOrNull(PyObject* obj) {
    if (obj != nullptr && PyType_Check(obj)) return obj;
    Py_XDECREF(obj);
    return nullptr;
  }
  // A dtype's datatype: NumPy's dtypes of the built-in types are single objects, remembered by identity
  // (each holds a reference); another dtype is read by its typestr.
  bool typeOf(const nb::object& dtype, alloyDataType_t* type) {
    if (!dtype.is_valid()) return false;
    for (const auto& known : dtypes_)
      if (known.first == dtype.ptr()) {
        *type = known.second;
        return true;
      }
    const nb::object typestr = attribute(dtype, names.str);
    if (!typestr.is_valid() || !fromTypestr(typestr, type)) return false;
    if (dtypes_.size() < kRemembered) dtypes_.emplace_back(dtype.inc_ref().ptr(), *type);
    return true;
  }

  static constexpr size_t kRemembered = 32;
  PyObject* ndarray_ = nullptr;  // Py_None once CuPy was found without what this needs
  PyObject *util_ = nullptr, *currentStream_ = nullptr, *defaultStreamPtr_ = nullptr;
  PyObject *stream_ = nullptr, *externalStream_ = nullptr;  // cupy.cuda.Stream, ExternalStream, or nullptr
  std::vector<std::pair<PyObject*, alloyDataType_t>> dtypes_;
};
CupyArrays cupyArrays;

// One call of a collective: its name (which starts every message), the arrays read so far (the stream it
// runs on follows their producers), and the communicator.
class Collective {
 public:
  Collective(const char* function, uintptr_t comm) : function_(function), comm_(comm) {}

  // The argument `role`, read and checked. Arrays are read in place and handed out by reference: a copy
  // of one was a tenth of a call's cost.
  const Array& array(nb::handle obj, const char* role) {
    Array& a = next(obj, role);
    read(obj, role, &a);
    return a;
  }

  // The argument `role` beside the first array read: that array again where it is the same object (in
  // place), else read; either way of the first's datatype.
  const Array& partner(nb::handle obj, const char* role) {
    if (obj.is(firstObject_)) return arrays_[0];  // adds no producer stream the first did not
    const Array& a = array(obj, role);
    if (a.type != arrays_[0].type)
      invalid(std::string(function_) + ": " + firstRole_ + " is " + kTypes[arrays_[0].type].name + " but " + role +
              " is " + kTypes[a.type].name + "; expected the same datatype");
    return a;
  }

  // Refuses an array of another element count than the operation needs (`what` says how it is derived).
  void expect(const Array& a, const char* role, size_t count, const char* what) const {
    if (a.count != count)
      invalid(std::string(function_) + ": " + role + " has " + std::to_string(a.count) + " elements; expected " +
              std::to_string(count) + " (" + what + ")");
  }

  // A reduction operator: an int (alloy.RedOp's members are) from SUM to AVG.
  alloyRedOp_t redOp(nb::handle op) const {
    if (PyLong_Check(op.ptr())) {
      int overflow = 0;
      const long value = PyLong_AsLongAndOverflow(op.ptr(), &overflow);
      if (overflow == 0 && value >= 0 && value < alloyNumOps) return static_cast<alloyRedOp_t>(value);
    }
    invalid(std::string(function_) + ": op " + reprText(op) + " is not a reduction operator (expected alloy.SUM, PROD, "
            "MAX, MIN or AVG)");
  }

  // int(value) for a rank argument (root, peer): what int() accepts, within C's int.
  int rank(nb::handle value, const char* name) const {
    const nb::object integer = nb::steal(PyNumber_Long(value.ptr()));
    if (!integer.is_valid()) throw nb::python_error();
    int overflow = 0;
    const long result = PyLong_AsLongAndOverflow(integer.ptr(), &overflow);
    if (overflow != 0 || result < std::numeric_limits<int>::min() || result > std::numeric_limits<int>::max())
      invalid(std::string(function_) + ": " + name + " " + reprText(integer) + " is not a rank (expected an int)");
    return static_cast<int>(result);
  }

  // Counts or displacements, one per rank: int() of each entry, none negative.
  std::vector<size_t> counts(nb::handle values, const char* name, int size) const {
    std::vector<size_t> result;
    bool negative = false, huge = false;
    const nb::object iterator = nb::steal(PyObject_GetIter(values.ptr()));
    if (!iterator.is_valid()) throw nb::python_error();
    while (PyObject* entry = PyIter_Next(iterator.ptr())) {
      const nb::object integer = nb::steal(PyNumber_Long(nb::steal(entry).ptr()));
      if (!integer.is_valid()) throw nb::python_error();
      int overflow = 0;
      const long long value = PyLong_AsLongLongAndOverflow(integer.ptr(), &overflow);
      negative |= overflow < 0 || (overflow == 0 && value < 0);  // on overflow the value is -1
      huge |= overflow > 0;
      result.push_back(static_cast<size_t>(value));
    }
    if (PyErr_Occurred()) throw nb::python_error();
    const std::string prefix = std::string(function_) + ": " + name;
    if (result.size() != static_cast<size_t>(size))
      invalid(prefix + " has " + std::to_string(result.size()) + " entries; expected one per rank (" +
              std::to_string(size) + ")");
    if (negative) invalid(prefix + " has a negative entry; expected counts and displacements >= 0");
    if (huge) invalid(prefix + " has an entry of 2**63 or more; expected counts and displacements in elements");
    return result;
  }

  // Refuses counts and displacements that reach past the end of an array.
  void within(const Array& a, const char* role, const std::vector<size_t>& counts,
              const std::vector<size_t>& displs) const {
    size_t end = 0;  // both below 2**63: the sum fits
    for (size_t p = 0; p < counts.size(); ++p)
      if (counts[p] > 0 && displs[p] + counts[p] > end) end = displs[p] + counts[p];
    if (end > a.count)
      invalid(std::string(function_) + ": " + role + " has " + std::to_string(a.count) +
              " elements but the counts and displacements reach element " + std::to_string(end));
  }

  // Enqueues: on `stream` when given (an int handle, or an object with __cuda_stream__, cuda_stream or
  // ptr), made to wait for every array's producer stream that differs; else on the first producer stream
  // an array names, else on the legacy default stream. `enqueue(comm, stream)` is the Alloy call; its
  // failure raises with the message Alloy left.
  template <typename Enqueue>
  void run(nb::handle stream, Enqueue enqueue) {
    const uintptr_t chosen = stream.is_none() ? producerStream() : streamHandle(stream);
    if (comm_ == 0) fail(alloyInvalidUsage, "the communicator was destroyed or aborted");
    follow(chosen);
    const alloyResult_t result = enqueue(commOf(comm_), streamOf(chosen));
    if (result != alloySuccess) {
      const char* message = alloyGetLastError(commOf(comm_));
      fail(result, message != nullptr && *message != '\0' ? message : alloyGetErrorString(result));
    }
  }

 private:
  // CAI v3's stream value that means the legacy default stream (0 as a handle).
  static constexpr uintptr_t kLegacy = 1;

  std::string where(const char* role) const { return std::string(function_) + ": " + role + ": "; }

  Array& next(nb::handle obj, const char* role) {
    if (count_ == 0) {
      firstObject_ = obj;
      firstRole_ = role;
    }
    return arrays_[count_++];
  }

  void read(nb::handle obj, const char* role, Array* a) const {
    if (cupyArrays.takes(obj) && cupyArrays.read(obj, a)) {
      // One stream for every CuPy array of the call: they are read at one moment, as their interfaces
      // would be.
      if (!cupyStreamRead_) cupyStreamRead_ = cupyArrays.stream(&cupyNamed_, &cupyStream_);
      if (cupyStreamRead_) {
        a->named = cupyNamed_;
        a->producer = cupyNamed_ ? cupyStream_ : 0;
        return;
      }
    }
    PyObject* cai = nullptr;
#if PY_VERSION_HEX >= 0x030D0000
    const int found = PyObject_GetOptionalAttr(obj.ptr(), names.cudaArrayInterface, &cai);
#else
    const int found = _PyObject_LookupAttr(obj.ptr(), names.cudaArrayInterface, &cai);
#endif
    if (found < 0) {
      // Older PyTorch raises TypeError for bfloat16 tensors, which DLPack carries.
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw nb::python_error();
      PyErr_Clear();
    }
    nb::object interface = nb::steal(cai);
    if (interface.is_valid() && !interface.is_none()) {
      // The interface is a dict; another mapping is read as one.
      if (!PyDict_Check(interface.ptr())) {
        nb::object copy = nb::steal(PyDict_New());
        if (!copy.is_valid() || PyDict_Merge(copy.ptr(), interface.ptr(), 1) < 0) throw nb::python_error();
        interface = std::move(copy);
      }
      PyObject* typestr = item(interface, names.typestr);
      if (typestr != nullptr && fromTypestr(typestr, &a->type)) return fromInterface(interface, role, a);
      // A typestr with no datatype of its own ('<V2': PyTorch 2.11's bfloat16) is read through DLPack,
      // which names bfloat16 and the float8 formats.
      if (!attribute(obj, names.dlpack).is_valid())
        invalid(where(role) + "datatype " + (typestr != nullptr ? reprText(typestr) : "None") +
                " is not one Alloy reduces or moves (expected int8, uint8, int32, uint32, int64, uint64, float16, "
                "float32, float64; bfloat16 and float8 arrays through DLPack)");
      return fromDlpackObject(obj, role, a);
    }
    if (attribute(obj, names.dlpack).is_valid()) return fromDlpackObject(obj, role, a);
    invalid(where(role) + "a " + typeName(obj) + " is not device memory Alloy can read (expected an object with "
            "__cuda_array_interface__ or __dlpack__ in CUDA device memory: CuPy, PyTorch, Numba)");
  }

  // The common case (CuPy's and PyTorch's contiguous arrays: strides None) reads four entries and one
  // extent per dimension, and allocates nothing.
  void fromInterface(nb::handle cai, const char* role, Array* a) const {
    PyObject* shape = item(cai, names.shape);
    if (shape == nullptr) invalid(where(role) + "__cuda_array_interface__ has no 'shape'");
    a->count = elements(shape, role);
    PyObject* strides = item(cai, names.strides);
    if (strides != nullptr && strides != Py_None &&
        !compact(integers(shape), integers(strides), kTypes[a->type].itemsize))
      invalid(where(role) + "the array is not contiguous (strides " + tupleText(strides) + " for shape " +
              tupleText(shape) + "); expected a C-contiguous array");
    PyObject* data = item(cai, names.data);
    if (data == nullptr) invalid(where(role) + "__cuda_array_interface__ has no 'data'");
    const nb::object address = nb::steal(PySequence_GetItem(data, 0));
    if (!address.is_valid()) throw nb::python_error();
    if (!address.is_none()) a->address = handleValue(address, [&] { return where(role) + "data address"; });
    PyObject* producer = item(cai, names.stream);
    if (producer != nullptr && producer != Py_None) {
      a->named = true;
      a->producer = handleValue(producer, [&] { return where(role) + "__cuda_array_interface__ stream"; });
    }
  }

  // prod(shape).
  size_t elements(nb::handle shape, const char* role) const {
    const nb::object extents = nb::steal(PySequence_Fast(shape.ptr(), "__cuda_array_interface__ shape is no sequence"));
    if (!extents.is_valid()) throw nb::python_error();
    unsigned long long count = 1;
    bool fits = true;
    for (Py_ssize_t d = 0; d < PySequence_Fast_GET_SIZE(extents.ptr()); ++d) {
      const long long extent = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(extents.ptr(), d));
      if (extent == -1 && PyErr_Occurred()) throw nb::python_error();
      if (extent < 0) invalid(where(role) + "shape " + tupleText(shape) + " has a negative extent");
      fits = fits && !__builtin_mul_overflow(count, static_cast<unsigned long long>(extent), &count);
    }
    if (!fits) invalid(where(role) + "shape " + tupleText(shape) + " holds more elements than memory can");
    return static_cast<size_t>(count);
  }

  void fromDlpackObject(nb::handle obj, const char* role, Array* a) const {
    nb::ndarray<> array;
    try {
      array = nb::cast<nb::ndarray<>>(obj);
    } catch (const std::exception& err) {  // the producer's own refusal (unsupported device, dtype, layout)
      invalid(where(role) + "cannot read the object through DLPack: " + err.what());
    }
    const int device = array.device_type();
    if (device != nb::device::cuda::value && device != nb::device::cuda_managed::value)
      invalid(where(role) + "the array is in host memory (DLPack device type " + std::to_string(device) +
              "); expected CUDA device memory");
    const nb::dlpack::dtype t = array.dtype();
    if (!fromDlpack(t, &a->type))
      invalid(where(role) + "DLPack datatype (code " + std::to_string(t.code) + ", " + std::to_string(t.bits) +
              " bits, " + std::to_string(t.lanes) + " lanes) is not one Alloy reduces or moves");
    std::vector<int64_t> shape(array.ndim()), strides, byteStrides;
    for (size_t d = 0; d < array.ndim(); ++d) shape[d] = array.shape(d);
    if (array.stride_ptr() != nullptr) {
      for (size_t d = 0; d < array.ndim(); ++d) {
        strides.push_back(array.stride(d));
        byteStrides.push_back(array.stride(d) * kTypes[a->type].itemsize);
      }
    }
    if (!compact(shape, byteStrides, kTypes[a->type].itemsize))
      invalid(where(role) + "the array is not contiguous (strides " + tupleText(nb::cast(strides)) +
              " elements for shape " + tupleText(nb::cast(shape)) + "); expected a C-contiguous array");
    a->address = reinterpret_cast<uintptr_t>(array.data());
    a->count = 1;
    for (int64_t extent : shape) a->count *= static_cast<size_t>(extent);
  }

  uintptr_t producerStream() const {
    for (size_t i = 0; i < count_; ++i)
      if (arrays_[i].named) return arrays_[i].producer;
    return 0;
  }

  static uintptr_t streamHandle(nb::handle stream) {
    if (PyLong_Check(stream.ptr())) return handleValue(stream, streamArgument);
    uintptr_t cupyHandle = 0;
    if (cupyArrays.streamPointer(stream, &cupyHandle)) return cupyHandle;
    const nb::object protocol = attribute(stream, names.cudaStreamProtocol);
    if (protocol.is_valid() && !protocol.is_none()) {  // cuda.core's protocol: a (version, handle) pair
      const nb::object pair = PyCallable_Check(protocol.ptr()) ? protocol() : protocol;
      const nb::object entries = nb::steal(PySequence_Fast(pair.ptr(), ""));
      if (!entries.is_valid() || PySequence_Fast_GET_SIZE(entries.ptr()) != 2) {
        PyErr_Clear();
        invalid("stream: __cuda_stream__ gave " + reprText(pair) + " (expected a (version, handle) pair)");
      }
      const nb::object handle = nb::steal(PyNumber_Long(PySequence_Fast_GET_ITEM(entries.ptr(), 1)));
      if (!handle.is_valid()) throw nb::python_error();
      return handleValue(handle, streamArgument);
    }
    for (PyObject* name : {names.cudaStream, names.ptr}) {
      const nb::object handle = attribute(stream, name);
      if (handle.is_valid() && PyLong_Check(handle.ptr())) return handleValue(handle, streamArgument);
    }
    invalid("stream: a " + typeName(stream) + " is not a CUDA stream (expected an int handle, or an object with "
            "__cuda_stream__, cuda_stream or ptr)");
  }

  // Makes `stream` wait for the work enqueued so far on each array's producer stream that differs (once
  // per run of arrays on the same one), as __cuda_array_interface__ asks of a consumer.
  void follow(uintptr_t stream) const {
    bool waited = false;
    uintptr_t last = 0;
    for (size_t i = 0; i < count_; ++i) {
      const Array& a = arrays_[i];
      if (!a.named || a.producer == stream || (a.producer == kLegacy && stream == 0) ||
          (waited && a.producer == last))
        continue;
      cudaEvent_t event = nullptr;
      cudaError_t err = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
      if (err == cudaSuccess) err = cudaEventRecord(event, streamOf(a.producer));
      if (err == cudaSuccess) err = cudaStreamWaitEvent(streamOf(stream), event, 0);
      if (event != nullptr) cudaEventDestroy(event);
      if (err != cudaSuccess)
        fail(alloyCudaError, nb::str("stream: cannot order stream {:#x} after the array's stream {:#x}: {}")
                                 .format(stream, a.producer, cudaGetErrorString(err))
                                 .c_str());
      waited = true;
      last = a.producer;
    }
  }

  // The CuPy arrays' stream, read at the first of them (CupyArrays::stream).
  mutable bool cupyStreamRead_ = false, cupyNamed_ = false;
  mutable uintptr_t cupyStream_ = 0;

  const char* function_;
  uintptr_t comm_;
  Array arrays_[3];  // at most sendbuf, recvbuf and relaybuf
  size_t count_ = 0;
  nb::handle firstObject_;
  const char* firstRole_ = "";
};

std::pair<int, uintptr_t> commCreate(MPI_Fint fortranComm, int device, int timeoutMs) {
  alloyConfig_t config = ALLOY_CONFIG_INITIALIZER;
  config.cudaDevice = device;
  config.timeoutMs = timeoutMs;
  alloyComm_t comm = nullptr;
  alloyResult_t result;
  {
    // Collective over MPI: other Python threads may run meanwhile.
    nb::gil_scoped_release released;
    result = alloyCommCreateFromMPI(MPI_Comm_f2c(fortranComm), &config, &comm);
  }
  return {result, reinterpret_cast<uintptr_t>(comm)};
}

// One query of the form alloyCommX(comm, &value).
template <typename T>
std::pair<int, T> query(alloyResult_t (*get)(alloyComm_t, T*), uintptr_t comm) {
  T value{};
  const alloyResult_t result = get(commOf(comm), &value);
  return {result, value};
}

}  // namespace

NB_MODULE(_alloy, m) {
  m.doc() = "Alloy's C API for the alloy package; use the package instead";
  internNames();
  m.def("version", [] {
    int v = 0;
    alloyGetVersion(&v);
    return v;
  });
  m.def("error_string", [](int result) { return std::string(alloyGetErrorString(static_cast<alloyResult_t>(result))); });
  m.def("last_error", [](uintptr_t comm) { return std::string(alloyGetLastError(commOf(comm))); });
  m.def("comm_create_from_mpi", &commCreate);
  m.def("comm_destroy", [](uintptr_t comm) {
    nb::gil_scoped_release released;
    return static_cast<int>(alloyCommDestroy(commOf(comm)));
  });
  m.def("comm_abort", [](uintptr_t comm) { return static_cast<int>(alloyCommAbort(commOf(comm))); });
  m.def("comm_async_error", [](uintptr_t comm) {
    alloyResult_t async = alloySuccess;
    const alloyResult_t result = alloyCommGetAsyncError(commOf(comm), &async);
    return std::make_pair(static_cast<int>(result), static_cast<int>(async));
  });
  m.def("comm_count", [](uintptr_t comm) { return query<int>(alloyCommCount, comm); });
  m.def("comm_user_rank", [](uintptr_t comm) { return query<int>(alloyCommUserRank, comm); });
  m.def("comm_cu_device", [](uintptr_t comm) { return query<int>(alloyCommCuDevice, comm); });
  m.def("group_start", [] { return static_cast<int>(alloyGroupStart()); });
  m.def("group_end", [] { return static_cast<int>(alloyGroupEnd()); });

  // The C call alone on integers, as python/benchmarks/call_cost.py times it beside Comm.allreduce
  // (issue #33's bound is on the difference).
  m.def("all_reduce", [](uintptr_t send, uintptr_t recv, size_t count, int type, int op, uintptr_t comm, uintptr_t stream) {
    return static_cast<int>(alloyAllReduce(constPointer(send), pointer(recv), count, static_cast<alloyDataType_t>(type),
                                           static_cast<alloyRedOp_t>(op), commOf(comm), streamOf(stream)));
  });

  // The collectives, named and argued as Comm's methods (plus the communicator's handle, and its size
  // where a check needs it); each returns None or raises AlloyError. Object arguments may be None
  // (nanobind refuses None unless told): where None is no valid value, the message says what was expected.
  m.def("allreduce", [](uintptr_t comm, nb::handle sendbuf, nb::handle recvbuf, nb::handle op, nb::handle stream) {
    Collective c("allreduce", comm);
    const Array& send = c.array(sendbuf, "sendbuf");
    const Array& recv = c.partner(recvbuf, "recvbuf");
    const alloyRedOp_t o = c.redOp(op);
    c.run(stream, [&](alloyComm_t co, cudaStream_t s) {
      return alloyAllReduce(constPointer(send.address), pointer(recv.address), send.count, send.type, o, co, s);
    });
  }, "comm"_a, "sendbuf"_a.none(), "recvbuf"_a.none(), "op"_a.none(), "stream"_a.none());
  m.def("reduce", [](uintptr_t comm, nb::handle sendbuf, nb::handle recvbuf, nb::handle root, nb::handle op,
                     nb::handle stream) {
    Collective c("reduce", comm);
    const Array& send = c.array(sendbuf, "sendbuf");
    const Array& recv = recvbuf.is_none() ? kAbsent : c.partner(recvbuf, "recvbuf");
    const int r = c.rank(root, "root");
    const alloyRedOp_t o = c.redOp(op);
    c.run(stream, [&](alloyComm_t co, cudaStream_t s) {
      return alloyReduce(constPointer(send.address), pointer(recv.address), send.count, send.type, o, r, co, s);
    });
  }, "comm"_a, "sendbuf"_a.none(), "recvbuf"_a.none(), "root"_a.none(), "op"_a.none(), "stream"_a.none());
  m.def("broadcast", [](uintptr_t comm, nb::handle buf, nb::handle root, nb::handle recvbuf, nb::handle stream) {
    Collective c("broadcast", comm);
    const Array& send = c.array(buf, "buf");
    const Array& recv = c.partner(recvbuf.is_none() ? buf : recvbuf, "recvbuf");
    const int r = c.rank(root, "root");
    c.run(stream, [&](alloyComm_t co, cudaStream_t s) {
      return alloyBroadcast(constPointer(send.address), pointer(recv.address), recv.count, recv.type, r, co, s);
    });
  }, "comm"_a, "buf"_a.none(), "root"_a.none(), "recvbuf"_a.none(), "stream"_a.none());
  m.def("allgather", [](uintptr_t comm, int size, nb::handle sendbuf, nb::handle recvbuf, nb::handle stream) {
    Collective c("allgather", comm);
    const Array& send = c.array(sendbuf, "sendbuf");
    const Array& recv = c.partner(recvbuf, "recvbuf");
    c.expect(recv, "recvbuf", send.count * size, "size x sendbuf's elements");
    c.run(stream, [&](alloyComm_t co, cudaStream_t s) {
      return alloyAllGather(constPointer(send.address), pointer(recv.address), send.count, send.type, co, s);
    });
  }, "comm"_a, "size"_a, "sendbuf"_a.none(), "recvbuf"_a.none(), "stream"_a.none());
  m.def("reduce_scatter", [](uintptr_t comm, int size, nb::handle sendbuf, nb::handle recvbuf, nb::handle op,
                             nb::handle stream) {
    Collective c("reduce_scatter", comm);
    const Array& send = c.array(sendbuf, "sendbuf");
    const Array& recv = c.partner(recvbuf, "recvbuf");
    c.expect(send, "sendbuf", recv.count * size, "size x recvbuf's elements");
    const alloyRedOp_t o = c.redOp(op);
    c.run(stream, [&](alloyComm_t co, cudaStream_t s) {
      return alloyReduceScatter(constPointer(send.address), pointer(recv.address), recv.count, recv.type, o, co, s);
    });
  }, "comm"_a, "size"_a, "sendbuf"_a.none(), "recvbuf"_a.none(), "op"_a.none(), "stream"_a.none());
  m.def("alltoall", [](uintptr_t comm, int size, nb::handle sendbuf, nb::handle recvbuf, nb::handle stream) {
    Collective c("alltoall", comm);
    const Array& send = c.array(sendbuf, "sendbuf");
    const Array& recv = c.partner(recvbuf, "recvbuf");
    if (send.count % size != 0)
      invalid("alltoall: sendbuf has " + std::to_string(send.count) + " elements; expected a multiple of size (" +
              std::to_string(size) + ")");
    c.expect(recv, "recvbuf", send.count, "as many elements as sendbuf");
    c.run(stream, [&](alloyComm_t co, cudaStream_t s) {
      return alloyAlltoAll(constPointer(send.address), pointer(recv.address), send.count / size, send.type, co, s);
    });
  }, "comm"_a, "size"_a, "sendbuf"_a.none(), "recvbuf"_a.none(), "stream"_a.none());
  m.def("alltoallv", [](uintptr_t comm, int size, nb::handle sendbuf, nb::handle recvbuf, nb::handle sendcounts,
                        nb::handle sdispls, nb::handle recvcounts, nb::handle rdispls, nb::handle relaybuf,
                        nb::handle stream) {
    Collective c("alltoallv", comm);
    const Array& send = c.array(sendbuf, "sendbuf");
    const Array& recv = c.partner(recvbuf, "recvbuf");
    const std::vector<size_t> sc = c.counts(sendcounts, "sendcounts", size), sd = c.counts(sdispls, "sdispls", size);
    const std::vector<size_t> rc = c.counts(recvcounts, "recvcounts", size), rd = c.counts(rdispls, "rdispls", size);
    c.within(send, "sendbuf", sc, sd);
    c.within(recv, "recvbuf", rc, rd);
    const Array& relay = relaybuf.is_none() ? kAbsent : c.array(relaybuf, "relaybuf");
    c.run(stream, [&](alloyComm_t co, cudaStream_t s) {
      return alloyAlltoAllv(constPointer(send.address), sc.data(), sd.data(), pointer(recv.address), rc.data(),
                            rd.data(), pointer(relay.address), send.type, co, s);
    });
  }, "comm"_a, "size"_a, "sendbuf"_a.none(), "recvbuf"_a.none(), "sendcounts"_a.none(), "sdispls"_a.none(),
        "recvcounts"_a.none(), "rdispls"_a.none(), "relaybuf"_a.none(), "stream"_a.none());
  m.def("send", [](uintptr_t comm, nb::handle buf, nb::handle peer, nb::handle stream) {
    Collective c("send", comm);
    const Array& a = c.array(buf, "buf");
    const int p = c.rank(peer, "peer");
    c.run(stream, [&](alloyComm_t co, cudaStream_t s) {
      return alloySend(constPointer(a.address), a.count, a.type, p, co, s);
    });
  }, "comm"_a, "buf"_a.none(), "peer"_a.none(), "stream"_a.none());
  m.def("recv", [](uintptr_t comm, nb::handle buf, nb::handle peer, nb::handle stream) {
    Collective c("recv", comm);
    const Array& a = c.array(buf, "buf");
    const int p = c.rank(peer, "peer");
    c.run(stream, [&](alloyComm_t co, cudaStream_t s) {
      return alloyRecv(pointer(a.address), a.count, a.type, p, co, s);
    });
  }, "comm"_a, "buf"_a.none(), "peer"_a.none(), "stream"_a.none());
}
