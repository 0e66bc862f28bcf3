// Owning pointers to verbs objects: each is released by its own ibv_destroy_* / ibv_dealloc_pd /
// ibv_dereg_mr / ibv_close_device, reached through the loaded library (verbs_library.h), so the deleter
// carries that function.
#pragma once

#include <memory>

namespace alloy {
namespace verbs {

template <typename T>
struct VerbsDeleter {
  int (*destroy)(T*) = nullptr;
  void operator()(T* object) const {
    if (object != nullptr) destroy(object);
  }
};

template <typename T>
using VerbsPtr = std::unique_ptr<T, VerbsDeleter<T>>;

template <typename T>
VerbsPtr<T> own(T* object, int (*destroy)(T*)) {
  return VerbsPtr<T>(object, VerbsDeleter<T>{destroy});
}

}  // namespace verbs
}  // namespace alloy
