// Benchmark harness: one worker node process that `leap bench` starts on loopback for a cluster
// scenario (`leap bench node` over latency models, `leap node` for the real stages). Started
// from its argv with its output in files, its HOST:PORT read from its ready line within a bound,
// stopped with SIGTERM (SIGKILL after a bound) and waited for, so none outlives the benchmark;
// when stopped it gives its CPU time, its own and its waited-for children's (nvcc, the host
// compiler, the executors' runs). While any runs, SIGINT, SIGTERM and SIGHUP send the nodes
// SIGTERM before they end `leap bench` (SIGKILL cannot be caught: then they keep running). Main
// thread of `leap bench`; no CAF.
#pragma once

#include "common/result.hpp"

#include <chrono>
#include <string>
#include <sys/types.h>
#include <vector>

namespace leap::bench {

class node_process {
public:
  // argv[0] is the program (a path); stdout and stderr go to `log`.out and `log`.err.
  node_process(std::vector<std::string> argv, const std::string& log);
  ~node_process(); // stop()
  node_process(const node_process&) = delete;
  node_process& operator=(const node_process&) = delete;

  // Its HOST:PORT from the line "... ready on HOST:PORT", waiting at most `limit`; an error
  // names its log files (or why it could not start, or that it exited first).
  result<std::string> address(std::chrono::milliseconds limit);

  // SIGTERM, then SIGKILL when it has not exited after `grace`; waits for it. Returns the CPU
  // seconds (user + system) of the process and of the children it waited for, or -1 when it
  // was not running (never started, already stopped). Idempotent.
  double stop(std::chrono::milliseconds grace = std::chrono::seconds(10));

  // CPU seconds (user + system) it and its waited-for children have used so far (/proc), or -1
  // when it is not running or cannot be read.
  double cpu_seconds() const;

  const std::string& log() const { return log_; }

private:
  pid_t pid_ = 0;
  std::string log_;
  std::string start_error_;
};

} // namespace leap::bench
