// A reference to a callable that a function calls only before it returns: the drivers' describe and
// pass-on steps (execute.h, mpi_layer/run.h). Unlike std::function it never allocates, however much the
// lambda captures: a std::function keeps at most 16 bytes of captures in place (libstdc++), and the
// entry points' lambdas capture up to ten references, which cost a heap allocation on every call.
// It refers to the callable and does not copy it: pass a lambda directly as the argument.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace alloy_mpix {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef> &&
                                                    std::is_invocable_r_v<R, F&, Args...>>>
  FunctionRef(F&& callable)  // implicit: a lambda converts where it is passed
      : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(callable)))),
        call_([](void* c, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(c))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(callable_, std::forward<Args>(args)...); }

 private:
  void* callable_;
  R (*call_)(void*, Args...);
};

}  // namespace alloy_mpix
