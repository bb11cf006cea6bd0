// The warp, converged-lane and tile collectives of the fiber runtime: once every lane a
// collective names has arrived, its result (shuffle source, vote, match, reduction) is computed
// and the lanes are made ready again; what the CUDA guide leaves undefined (a lane outside the
// mask or exited, lanes naming different masks) is noted. Runs on the worker's OS thread.
#include <string>

#include "fiber_state.h"

namespace leap_emu::detail {

const char* op_name(warp_op op) {
  switch (op) {
    case warp_op::sync: return "__syncwarp";
    case warp_op::shfl: return "a __shfl*_sync";
    case warp_op::ballot: return "a vote (__ballot/__any/__all_sync)";
    case warp_op::match_any:
    case warp_op::match_all: return "a __match_*_sync";
    case warp_op::converge: return "coalesced_threads()";
    default: return "a __reduce_*_sync";
  }
}

namespace {

std::uint64_t reduce(warp_op op, const fiber* lanes, unsigned group) {
  std::uint32_t acc = 0;
  bool first = true;
  for (unsigned l = 0; l < 32; ++l) {
    if (!(group >> l & 1u)) continue;
    const auto v = static_cast<std::uint32_t>(lanes[l].value);
    if (first) { acc = v; first = false; continue; }
    switch (op) {
      case warp_op::reduce_add: acc += v; break;
      case warp_op::reduce_min_s: acc = static_cast<std::int32_t>(v) < static_cast<std::int32_t>(acc) ? v : acc; break;
      case warp_op::reduce_max_s: acc = static_cast<std::int32_t>(v) > static_cast<std::int32_t>(acc) ? v : acc; break;
      case warp_op::reduce_min_u: acc = v < acc ? v : acc; break;
      case warp_op::reduce_max_u: acc = v > acc ? v : acc; break;
      case warp_op::reduce_and: acc &= v; break;
      case warp_op::reduce_or: acc |= v; break;
      case warp_op::reduce_xor: acc ^= v; break;
      default: break;
    }
  }
  return acc;
}

// A shuffle that reads a lane outside its group: undefined on a GPU (PTX: the value is
// unspecified). Noted once per process with a reason, never silent; the lane gets its own value.
void note_undefined_shuffle(const fiber& f, unsigned group, unsigned live, unsigned count) {
  const char* why = f.src >= static_cast<int>(count) ? "does not exist (the block ends before it)"
                    : !(f.mask >> f.src & 1u)         ? "is not in the mask"
                    : !(live >> f.src & 1u)           ? "has already exited"
                                                      : "is not taking part";
  char buf[160];
  std::snprintf(buf, sizeof buf, "lane %d, which %s (mask 0x%08x, lanes taking part 0x%08x)", f.src, why, f.mask,
                group);
  record_undefined(std::string("emulation: undefined behaviour in kernel ") + tl_w->desc->kernel_name +
                   ", block " + dim_string(tl_block_idx) + ", thread " + dim_string(f.tid) +
                   ": a __shfl*_sync read " + buf +
                   "; a GPU returns an unspecified value there, the emulation returned the reading lane's own value");
}

// The guide's rule for every *_sync: each non-exited lane named in the mask executes the same
// intrinsic with the same mask. A group whose lanes name different sets of lanes (or wait in
// different intrinsics) is undefined on a GPU (a deadlock or garbage): noted, then released.
void check_same_mask(const fiber* lanes, unsigned group, unsigned live) {
  const unsigned first = static_cast<unsigned>(__builtin_ctz(group));
  for (unsigned l = first; l < 32; ++l) {
    if (!(group >> l & 1u)) continue;
    const unsigned named = (lanes[l].mask | (1u << l)) & live;
    if (named == group && lanes[l].op == lanes[first].op) continue;
    char buf[200];
    std::snprintf(buf, sizeof buf, "lane %u called %s with mask 0x%08x, lane %u (named in it) %s with mask 0x%08x",
                  first, op_name(lanes[first].op), lanes[first].mask, l, op_name(lanes[l].op), lanes[l].mask);
    record_undefined(std::string("emulation: undefined behaviour in kernel ") + tl_w->desc->kernel_name + ", block " +
                     dim_string(tl_block_idx) + ": " + buf +
                     "; every non-exited lane named in the mask of a *_sync must call the same one with the same mask");
    return;
  }
}

// Completes the warp collective of the lanes in `group` (all waiting) of the warp at `lanes`.
void release_group(fiber* lanes, unsigned group, unsigned live, unsigned count) {
  check_same_mask(lanes, group, live);
  unsigned ballot = 0;
  for (unsigned l = 0; l < 32; ++l)
    if ((group >> l & 1u) && lanes[l].pred) ballot |= 1u << l;
  for (unsigned l = 0; l < 32; ++l) {
    if (!(group >> l & 1u)) continue;
    fiber& f = lanes[l];
    switch (f.op) {
      case warp_op::sync: break;
      case warp_op::shfl:
        if (f.src >= 0 && f.src < 32 && (group >> f.src & 1u)) {
          f.wresult = lanes[f.src].value;
        } else {
          f.wresult = f.value;
          if (f.src >= 0 && f.src < 32) note_undefined_shuffle(f, group, live, count);
        }
        break;
      case warp_op::ballot:
        f.wresult = ballot;
        f.pred_out = ballot == group;
        break;
      case warp_op::match_any:
      case warp_op::match_all: {
        unsigned same = 0;
        for (unsigned k = 0; k < 32; ++k)
          if ((group >> k & 1u) && lanes[k].value == f.value) same |= 1u << k;
        if (f.op == warp_op::match_any) {
          f.wresult = same;
        } else {
          f.pred_out = same == group;
          f.wresult = same == group ? group : 0u;
        }
        break;
      }
      default: f.wresult = reduce(f.op, lanes, group); break;
    }
    f.state = fstate::ready;
  }
}

}  // namespace

bool release_warps(worker_fibers& w, std::size_t n) {
  bool released = false;
  for (std::size_t base = 0; base < n; base += 32) {
    fiber* lanes = &w.fibers[base];
    const std::size_t count = n - base < 32 ? n - base : 32;
    unsigned waiting = 0, live = 0;
    for (std::size_t l = 0; l < count; ++l) {
      if (lanes[l].state == fstate::at_warp && lanes[l].op != warp_op::converge) waiting |= 1u << l;
      if (lanes[l].state != fstate::exited) live |= 1u << l;
    }
    for (unsigned l = 0; l < count && waiting; ++l) {
      if (!(waiting >> l & 1u)) continue;
      const unsigned group = (lanes[l].mask | (1u << l)) & live;
      if (group & ~waiting) continue;  // a partner has not arrived (or waits elsewhere)
      release_group(lanes, group, live, static_cast<unsigned>(count));
      waiting &= ~group;
      released = true;
    }
  }
  return released;
}

// Lanes waiting in coalesced_threads() / __activemask(): those of a warp at the same call site
// form the group. Runs only when nothing else can be released, so every lane that can get there
// has. When lanes of a warp wait at several sites, only the group at the first site in the
// source (the lowest line) goes on: the others may be where the warp reconverges after a branch
// (`if (c) { m = __activemask(); ... } m2 = __activemask();`), which on a GPU the lanes of the
// branch reach too before m2 is taken.
bool release_converged(worker_fibers& w, std::size_t n) {
  bool released = false;
  for (std::size_t base = 0; base < n; base += 32) {
    fiber* lanes = &w.fibers[base];
    const std::size_t count = n - base < 32 ? n - base : 32;
    unsigned group = 0;
    std::uint64_t site = ~std::uint64_t(0);
    for (std::size_t l = 0; l < count; ++l) {
      if (lanes[l].state != fstate::at_warp || lanes[l].op != warp_op::converge) continue;
      if (lanes[l].value < site) {
        site = lanes[l].value;
        group = 0;
      }
      if (lanes[l].value == site) group |= 1u << l;
    }
    for (std::size_t l = 0; l < count; ++l)
      if (group >> l & 1u) {
        lanes[l].wresult = group;
        lanes[l].state = fstate::ready;
      }
    released |= group != 0;
  }
  return released;
}

// Tiles larger than a warp (tile_collective): a tile goes on when every non-exited thread of it
// waits there with the same tile size.
bool release_tiles(worker_fibers& w, std::size_t n) {
  bool released = false;
  for (std::size_t i = 0; i < n; ++i) {
    const fiber& lead = w.fibers[i];  // the first waiter of its tile
    if (lead.state != fstate::at_tile) continue;
    const std::size_t base = i - i % lead.tile, end = base + lead.tile < n ? base + lead.tile : n;
    bool all = true;
    for (std::size_t k = base; k < end && all; ++k) {
      const fiber& f = w.fibers[k];
      all = f.state == fstate::exited || (f.state == fstate::at_tile && f.tile == lead.tile && f.top == lead.top);
    }
    const std::size_t last = end - 1;
    if (!all) {
      i = last;
      continue;
    }
    std::uint64_t any = 0, every = 1, acc = 0;
    bool have = false;
    for (std::size_t k = base; k < end; ++k) {
      const fiber& f = w.fibers[k];
      if (f.state == fstate::exited) continue;
      any |= f.value != 0;
      every &= f.value != 0;
      if (lead.top == tile_op::fold) acc = have ? lead.fold(lead.fold_obj, acc, f.value) : f.value;
      have = true;
    }
    for (std::size_t k = base; k < end; ++k) {
      fiber& f = w.fibers[k];
      if (f.state == fstate::exited) continue;
      switch (f.top) {
        case tile_op::sync: f.wresult = 0; break;
        case tile_op::shfl: {
          const std::size_t src = base + static_cast<std::size_t>(f.src) % f.tile;
          if (src < end && w.fibers[src].state != fstate::exited) {
            f.wresult = w.fibers[src].value;
          } else {
            f.wresult = f.value;
            record_undefined(std::string("emulation: undefined behaviour in kernel ") + w.desc->kernel_name +
                             ", block " + dim_string(tl_block_idx) + ", thread " + dim_string(f.tid) + ": a thread_block_tile<" +
                             std::to_string(f.tile) + ">::shfl read rank " + std::to_string(src - base) +
                             (src < end ? ", which has already exited" : ", which does not exist (the block ends before it)") +
                             "; the emulation returned the reading thread's own value");
          }
          break;
        }
        case tile_op::any: f.wresult = any; break;
        case tile_op::all: f.wresult = every; break;
        case tile_op::fold: f.wresult = acc; break;
      }
      f.state = fstate::ready;
    }
    released = true;
    i = last;
  }
  return released;
}

}  // namespace leap_emu::detail
