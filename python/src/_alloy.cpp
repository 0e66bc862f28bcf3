// The Python package's bindings: each function is one call of Alloy's C API (include/alloy.h) on plain
// integers (device pointers, stream and communicator handles) and returns the call's alloyResult_t with
// its outputs. The package (src/alloy) turns arrays and streams into these integers, and result codes
// into AlloyError with alloyGetLastError's message, which it reads right after the failing call on the
// same thread.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "alloy.h"

namespace nb = nanobind;

namespace {

alloyComm_t commOf(uintptr_t handle) { return reinterpret_cast<alloyComm_t>(handle); }
cudaStream_t streamOf(uintptr_t handle) { return reinterpret_cast<cudaStream_t>(handle); }
const void* constPointer(uintptr_t address) { return reinterpret_cast<const void*>(address); }
void* pointer(uintptr_t address) { return reinterpret_cast<void*>(address); }

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

// What a DLPack producer (an object with __dlpack__) describes: data address, device type and ordinal,
// DLPack type code, bits and lanes, shape, strides in elements (empty: compact row-major). For objects
// without __cuda_array_interface__; the package checks everything else.
std::tuple<uintptr_t, int, int, int, int, int, std::vector<int64_t>, std::vector<int64_t>> dlpackInfo(nb::handle obj) {
  nb::ndarray<> array = nb::cast<nb::ndarray<>>(obj);
  std::vector<int64_t> shape(array.ndim()), strides;
  for (size_t d = 0; d < array.ndim(); ++d) shape[d] = array.shape(d);
  if (array.stride_ptr() != nullptr)
    for (size_t d = 0; d < array.ndim(); ++d) strides.push_back(array.stride(d));
  const nb::dlpack::dtype t = array.dtype();
  return {reinterpret_cast<uintptr_t>(array.data()), array.device_type(), array.device_id(), t.code, t.bits, t.lanes,
          shape, strides};
}

// Makes `stream` wait for the work enqueued so far on `producer` (a __cuda_array_interface__'s stream).
int streamWait(uintptr_t stream, uintptr_t producer) {
  cudaEvent_t event = nullptr;
  cudaError_t err = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  if (err == cudaSuccess) err = cudaEventRecord(event, streamOf(producer));
  if (err == cudaSuccess) err = cudaStreamWaitEvent(streamOf(stream), event, 0);
  if (event != nullptr) cudaEventDestroy(event);
  return err;
}

}  // namespace

NB_MODULE(_alloy, m) {
  m.doc() = "Alloy's C API on integers; use the alloy package instead";
  m.def("version", [] {
    int v = 0;
    alloyGetVersion(&v);
    return v;
  });
  m.def("error_string", [](int result) { return std::string(alloyGetErrorString(static_cast<alloyResult_t>(result))); });
  m.def("last_error", [](uintptr_t comm) { return std::string(alloyGetLastError(commOf(comm))); });
  m.def("cuda_error_string", [](int err) { return std::string(cudaGetErrorString(static_cast<cudaError_t>(err))); });
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

  m.def("all_reduce", [](uintptr_t send, uintptr_t recv, size_t count, int type, int op, uintptr_t comm, uintptr_t stream) {
    return static_cast<int>(alloyAllReduce(constPointer(send), pointer(recv), count, static_cast<alloyDataType_t>(type),
                                           static_cast<alloyRedOp_t>(op), commOf(comm), streamOf(stream)));
  });
  m.def("broadcast", [](uintptr_t send, uintptr_t recv, size_t count, int type, int root, uintptr_t comm, uintptr_t stream) {
    return static_cast<int>(alloyBroadcast(constPointer(send), pointer(recv), count, static_cast<alloyDataType_t>(type),
                                           root, commOf(comm), streamOf(stream)));
  });
  m.def("reduce", [](uintptr_t send, uintptr_t recv, size_t count, int type, int op, int root, uintptr_t comm,
                     uintptr_t stream) {
    return static_cast<int>(alloyReduce(constPointer(send), pointer(recv), count, static_cast<alloyDataType_t>(type),
                                        static_cast<alloyRedOp_t>(op), root, commOf(comm), streamOf(stream)));
  });
  m.def("all_gather", [](uintptr_t send, uintptr_t recv, size_t count, int type, uintptr_t comm, uintptr_t stream) {
    return static_cast<int>(alloyAllGather(constPointer(send), pointer(recv), count, static_cast<alloyDataType_t>(type),
                                           commOf(comm), streamOf(stream)));
  });
  m.def("reduce_scatter", [](uintptr_t send, uintptr_t recv, size_t count, int type, int op, uintptr_t comm,
                             uintptr_t stream) {
    return static_cast<int>(alloyReduceScatter(constPointer(send), pointer(recv), count,
                                               static_cast<alloyDataType_t>(type), static_cast<alloyRedOp_t>(op),
                                               commOf(comm), streamOf(stream)));
  });
  m.def("alltoall", [](uintptr_t send, uintptr_t recv, size_t count, int type, uintptr_t comm, uintptr_t stream) {
    return static_cast<int>(alloyAlltoAll(constPointer(send), pointer(recv), count, static_cast<alloyDataType_t>(type),
                                          commOf(comm), streamOf(stream)));
  });
  m.def("alltoallv", [](uintptr_t send, const std::vector<size_t>& sendcounts, const std::vector<size_t>& sdispls,
                        uintptr_t recv, const std::vector<size_t>& recvcounts, const std::vector<size_t>& rdispls,
                        uintptr_t relay, int type, uintptr_t comm, uintptr_t stream) {
    return static_cast<int>(alloyAlltoAllv(constPointer(send), sendcounts.data(), sdispls.data(), pointer(recv),
                                           recvcounts.data(), rdispls.data(), pointer(relay),
                                           static_cast<alloyDataType_t>(type), commOf(comm), streamOf(stream)));
  });
  m.def("send", [](uintptr_t send, size_t count, int type, int peer, uintptr_t comm, uintptr_t stream) {
    return static_cast<int>(alloySend(constPointer(send), count, static_cast<alloyDataType_t>(type), peer, commOf(comm),
                                      streamOf(stream)));
  });
  m.def("recv", [](uintptr_t recv, size_t count, int type, int peer, uintptr_t comm, uintptr_t stream) {
    return static_cast<int>(alloyRecv(pointer(recv), count, static_cast<alloyDataType_t>(type), peer, commOf(comm),
                                      streamOf(stream)));
  });
  m.def("group_start", [] { return static_cast<int>(alloyGroupStart()); });
  m.def("group_end", [] { return static_cast<int>(alloyGroupEnd()); });
  m.def("dlpack_info", &dlpackInfo);
  m.def("stream_wait", &streamWait);
}
