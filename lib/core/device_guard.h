// Makes a CUDA device current for a scope and restores the caller's device afterwards, so that Alloy
// calls never change which device the application's thread has selected.
#pragma once

#include <cuda_runtime.h>

namespace alloy {

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (device < 0 || cudaGetDevice(&previous_) != cudaSuccess) return;
    if (previous_ != device && cudaSetDevice(device) == cudaSuccess) restore_ = true;
  }
  ~DeviceGuard() {
    if (restore_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  bool restore_ = false;
};

}  // namespace alloy
