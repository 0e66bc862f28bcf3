// The threads of a block that share one piece of work: the whole block, or a contiguous group of its warps
// while the other warps do something else (the direct engine's windows overlap the next window's stores
// with the current window's reduction that way: direct_bulk.cuh). The block-wide helpers (block_copy.cuh,
// block_reduce.cuh) split their work by a team's rank and size instead of threadIdx.x and blockDim.x.
#pragma once

namespace alloy {

struct Team {
  unsigned rank;  // this thread's index in the team
  unsigned size;  // threads in the team
};

__device__ inline Team wholeBlock() { return Team{threadIdx.x, blockDim.x}; }

// The first `threads` threads of the block, or the rest: this thread's place in the half it belongs to.
__device__ inline Team splitBlock(unsigned threads) {
  return threadIdx.x < threads ? Team{threadIdx.x, threads} : Team{threadIdx.x - threads, blockDim.x - threads};
}

}  // namespace alloy
