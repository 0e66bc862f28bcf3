// Writes one byte of each of 16384 fresh pages of 4 KiB (transparent huge pages refused, so that each page
// faults on its own) and exits: the program that host_profile_preload_check.sh preloads libhost-profile.so
// into, whose page faults it then counts.
#include <sys/mman.h>

#include <cstddef>

int main() {
  constexpr size_t kPage = 4096, kPages = 16384;
  void* memory = mmap(nullptr, kPage * kPages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return 1;
  madvise(memory, kPage * kPages, MADV_NOHUGEPAGE);
  volatile char* bytes = static_cast<volatile char*>(memory);
  for (size_t p = 0; p < kPages; ++p) bytes[p * kPage] = 1;
  return munmap(memory, kPage * kPages) == 0 ? 0 : 1;
}
