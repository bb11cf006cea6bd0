#include "env/process.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/process/async_pipe.hpp>
#include <boost/process/child.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/io.hpp>
#include <boost/process/search_path.hpp>
#include <boost/process/start_dir.hpp>
#include <boost/process/args.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/async.hpp>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_set>

namespace bp = boost::process;
namespace asio = boost::asio;

namespace leap::env {

std::string signal_description(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* desc = sigdescr_np(sig);
  std::string s = "signal " + std::to_string(sig);
  if (abbrev)
    s += std::string(" (SIG") + abbrev + (desc ? std::string(": ") + desc : std::string()) + ")";
  return s;
}

std::string process_outcome::describe() const {
  if (!started)
    return "could not start: " + start_error;
  if (timed_out)
    return "timed out after " + std::to_string(seconds).substr(0, 5) + " s (process group killed)";
  if (cancelled)
    return "cancelled";
  if (signaled)
    return "killed by " + signal_description(term_signal);
  return "exit code " + std::to_string(exit_code);
}

namespace {

// Applied in the child between fork and exec: only async-signal-safe calls.
struct child_setup : bp::extend::handler {
  const process_spec* spec;
  pid_t parent = ::getpid(); // made in the parent, before the fork
  explicit child_setup(const process_spec* s) : spec(s) {}
  template <class Executor>
  void on_exec_setup(Executor&) const {
    ::setsid();
    // A child dies with leap (killed by an operator or the OOM killer): no orphaned compiler or
    // candidate is left running. The runner's I/O thread forks, and it lives as long as leap.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(127); // leap died before the line above
    ::signal(SIGXFSZ, SIG_DFL); // leap ignores it (EFBIG as an error); a child's limits kill it
    auto lim = [](int res, long long v) {
      struct rlimit rl;
      rl.rlim_cur = rl.rlim_max = static_cast<rlim_t>(v);
      ::setrlimit(res, &rl);
    };
    if (spec->address_space_bytes > 0)
      lim(RLIMIT_AS, spec->address_space_bytes);
    if (spec->cpu_seconds > 0)
      lim(RLIMIT_CPU, spec->cpu_seconds);
    if (spec->file_size_bytes > 0)
      lim(RLIMIT_FSIZE, spec->file_size_bytes);
    if (spec->open_files > 0)
      lim(RLIMIT_NOFILE, spec->open_files);
    if (spec->no_core_dumps)
      lim(RLIMIT_CORE, 0);
    // Default signal dispositions for the child (the parent may ignore SIGPIPE).
    ::signal(SIGPIPE, SIG_DFL);
    if (spec->sandbox) {
      if (const char* why = apply_in_child(*spec->sandbox)) {
        const char prefix[] = "leap sandbox: ";
        (void)!::write(2, prefix, sizeof prefix - 1);
        (void)!::write(2, why, std::strlen(why));
        (void)!::write(2, "\n", 1);
        ::_exit(sandbox_setup_failed_exit);
      }
    }
  }
};

// Sets the child's environment (a null-terminated KEY=VALUE array that outlives the launch).
// Not boost::process::environment: its lookup (operator[], find) in Boost 1.74 compares the key
// over the full length of every entry, reading past the end of the shorter ones.
struct child_environment : bp::extend::handler {
  char** envp;
  explicit child_environment(char** e) : envp(e) {}
  template <class Executor>
  void on_setup(Executor& exec) const {
    exec.env = envp;
  }
};

} // namespace

class process_runner::running {
public:
  process_spec spec;
  callback done;
  std::unique_ptr<bp::async_pipe> out_pipe, err_pipe;
  std::unique_ptr<bp::child> child;
  std::unique_ptr<asio::steady_timer> timer;
  std::array<char, 65536> out_buf{}, err_buf{};
  std::size_t out_total = 0, err_total = 0;
  process_outcome outcome;
  std::chrono::steady_clock::time_point t0;
  pid_t pid = 0;
  bool exited = false, out_eof = false, err_eof = false, reported = false;
  int raw_status = 0;
};

struct process_runner::impl {
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> guard{io.get_executor()};
  std::thread thread;
  std::mutex mtx;
  std::unordered_set<std::shared_ptr<running>> live; // guarded by mtx
  std::atomic<std::size_t> active{0};
  bool stopping = false; // I/O thread only: no more launches
  std::once_flag shut;
  std::promise<void> ran_out; // set when the I/O thread's loop returns

  void launch(const std::shared_ptr<running>& r);
  void read_more(const std::shared_ptr<running>& r, bool is_out);
  void on_exit(const std::shared_ptr<running>& r, int raw);
  void maybe_finish(const std::shared_ptr<running>& r);
  void kill_group(const std::shared_ptr<running>& r) {
    if (r->pid > 0)
      ::kill(-r->pid, SIGKILL);
  }
  void finish(const std::shared_ptr<running>& r);
};

void process_runner::impl::launch(const std::shared_ptr<running>& r) {
  r->t0 = std::chrono::steady_clock::now();
  auto& spec = r->spec;
  try {
    if (spec.argv.empty())
      throw std::runtime_error("empty command line");
    boost::filesystem::path exe = spec.argv[0];
    if (spec.argv[0].find('/') == std::string::npos) {
      exe = bp::search_path(spec.argv[0]);
      if (exe.empty())
        throw std::runtime_error("'" + spec.argv[0] + "' not found on PATH");
    }
    std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
    // The child's environment: the inherited one (unless clean_env), then spec.env over it.
    std::map<std::string, std::string> vars;
    auto put = [&vars](const std::string& kv) {
      auto eq = kv.find('=');
      if (eq != std::string::npos && eq > 0)
        vars[kv.substr(0, eq)] = kv.substr(eq + 1);
    };
    if (!spec.clean_env)
      for (char** e = environ; e && *e; ++e)
        put(*e);
    for (auto& kv : spec.env)
      put(kv);
    std::vector<std::string> env_entries;
    for (auto& [k, v] : vars)
      env_entries.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& e : env_entries)
      envp.push_back(e.data());
    envp.push_back(nullptr);
    r->out_pipe = std::make_unique<bp::async_pipe>(io);
    r->err_pipe = std::make_unique<bp::async_pipe>(io);
    std::weak_ptr<running> weak = r;
    // Boost may call this inline while the child object is still being constructed (when the
    // process is already gone): defer to the next turn of the loop, when `child` is set and
    // holds the raw wait status (exit code vs. signal).
    auto exit_handler = [this, weak](int, const std::error_code&) {
      asio::post(io, [this, weak] {
        if (auto self = weak.lock())
          on_exit(self, self->child ? self->child->native_exit_code() : 0);
      });
    };
    boost::filesystem::path dir = spec.cwd.empty() ? boost::filesystem::current_path()
                                                   : boost::filesystem::path(spec.cwd);
    r->child = std::make_unique<bp::child>(bp::exe = exe, bp::args = args,
                                           bp::std_out > *r->out_pipe, bp::std_err > *r->err_pipe,
                                           bp::std_in < bp::null, bp::start_dir = dir,
                                           child_environment(envp.data()), io,
                                           bp::on_exit = exit_handler, child_setup(&r->spec));
    r->pid = r->child->id();
    r->outcome.started = true;
  } catch (const std::exception& e) {
    r->outcome.started = false;
    r->outcome.start_error = e.what();
    r->exited = r->out_eof = r->err_eof = true;
    finish(r);
    return;
  }
  read_more(r, true);
  read_more(r, false);
  r->timer = std::make_unique<asio::steady_timer>(io);
  r->timer->expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
    std::chrono::duration<double>(spec.timeout_seconds)));
  std::weak_ptr<running> weak = r;
  r->timer->async_wait([this, weak](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->exited)
      return;
    self->outcome.timed_out = true;
    kill_group(self);
  });
}

void process_runner::impl::read_more(const std::shared_ptr<running>& r, bool is_out) {
  auto& pipe = is_out ? *r->out_pipe : *r->err_pipe;
  auto& buf = is_out ? r->out_buf : r->err_buf;
  pipe.async_read_some(asio::buffer(buf), [this, r, is_out](const boost::system::error_code& ec,
                                                            std::size_t n) {
    auto& text = is_out ? r->outcome.out : r->outcome.err;
    auto& trunc = is_out ? r->outcome.out_truncated : r->outcome.err_truncated;
    auto& buf = is_out ? r->out_buf : r->err_buf;
    auto& total = is_out ? r->out_total : r->err_total;
    if (n > 0) {
      auto room = r->spec.output_limit > text.size() ? r->spec.output_limit - text.size() : 0;
      text.append(buf.data(), std::min(n, room));
      if (n > room)
        trunc = true;
      total += n;
    }
    if (!ec && r->spec.output_hard_limit > 0 && total > r->spec.output_hard_limit) {
      r->outcome.output_limit_exceeded = true;
      boost::system::error_code ignored;
      (is_out ? r->out_pipe : r->err_pipe)->close(ignored);
      (is_out ? r->out_eof : r->err_eof) = true;
      maybe_finish(r);
      return;
    }
    if (ec) {
      (is_out ? r->out_eof : r->err_eof) = true;
      maybe_finish(r);
      return;
    }
    read_more(r, is_out);
  });
}

void process_runner::impl::on_exit(const std::shared_ptr<running>& r, int raw) {
  r->exited = true;
  r->raw_status = raw;
  r->outcome.seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - r->t0).count();
  if (r->timer)
    r->timer->cancel();
  // Whatever the child left in its process group goes with it.
  kill_group(r);
  if (!r->out_eof || !r->err_eof) {
    // A process outside the group may still hold the pipes: give them a moment, then close.
    auto grace = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(300));
    grace->async_wait([this, r, grace](const boost::system::error_code&) {
      if (r->reported)
        return;
      boost::system::error_code ignored;
      if (!r->out_eof)
        r->out_pipe->close(ignored);
      if (!r->err_eof)
        r->err_pipe->close(ignored);
      r->out_eof = r->err_eof = true;
      maybe_finish(r);
    });
  }
  maybe_finish(r);
}

void process_runner::impl::maybe_finish(const std::shared_ptr<running>& r) {
  if (r->exited && r->out_eof && r->err_eof && !r->reported)
    finish(r);
}

void process_runner::impl::finish(const std::shared_ptr<running>& r) {
  r->reported = true;
  if (r->outcome.started) {
    int st = r->raw_status;
    if (WIFSIGNALED(st)) {
      r->outcome.signaled = true;
      r->outcome.term_signal = WTERMSIG(st);
    } else if (WIFEXITED(st)) {
      r->outcome.exit_code = WEXITSTATUS(st);
    }
    if (r->child)
      r->child->detach();
  }
  auto done = std::move(r->done);
  auto outcome = std::move(r->outcome);
  {
    std::lock_guard<std::mutex> lk(mtx);
    live.erase(r);
  }
  r->child.reset();
  r->timer.reset();
  active.fetch_sub(1);
  // A callback's exception must not end the I/O thread (and with it leap).
  if (done) {
    try {
      done(std::move(outcome));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "leap: internal error in a process completion handler: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "leap: internal error in a process completion handler\n");
    }
  }
}

process_runner::process_runner() : impl_(std::make_unique<impl>()) {
  ::signal(SIGPIPE, SIG_IGN);
  impl_->thread = std::thread([i = impl_.get()] {
    i->io.run();
    i->ran_out.set_value();
  });
}

process_runner::~process_runner() { shutdown(); }

void process_runner::shutdown() {
  std::call_once(impl_->shut, [i = impl_.get()] {
    // On the I/O thread, which owns the pids: a launch is either done (and its child killed
    // here) or not begun (and it sees `stopping`).
    asio::post(i->io, [i] {
      i->stopping = true;
      std::lock_guard<std::mutex> lk(i->mtx);
      for (auto& r : i->live) {
        if (!r->reported && !r->exited)
          r->outcome.cancelled = true;
        i->kill_group(r);
      }
    });
    // Let the exit notifications of killed children and their callbacks drain: the loop ends
    // by itself once nothing is pending (a callback's own start() is pending work too).
    auto drained = i->ran_out.get_future();
    i->guard.reset();
    if (drained.wait_for(std::chrono::seconds(5)) != std::future_status::ready)
      i->io.stop();
    if (i->thread.joinable())
      i->thread.join();
  });
}

process_runner::handle process_runner::start(process_spec spec, callback done) {
  auto r = std::make_shared<running>();
  r->spec = std::move(spec);
  r->done = std::move(done);
  {
    std::lock_guard<std::mutex> lk(impl_->mtx);
    impl_->live.insert(r);
  }
  impl_->active.fetch_add(1);
  asio::post(impl_->io, [i = impl_.get(), r] {
    if (r->outcome.cancelled || i->stopping) {
      r->outcome.cancelled = true;
      r->exited = r->out_eof = r->err_eof = true;
      i->finish(r);
      return;
    }
    i->launch(r);
  });
  return r;
}

void process_runner::cancel(const handle& h) {
  if (!h)
    return;
  asio::post(impl_->io, [i = impl_.get(), h] {
    if (h->reported)
      return;
    h->outcome.cancelled = true;
    if (h->pid > 0)
      ::kill(-h->pid, SIGKILL);
  });
}

std::size_t process_runner::active() const { return impl_->active.load(); }

process_outcome run_blocking(process_spec spec) {
  process_runner runner;
  std::promise<process_outcome> p;
  auto f = p.get_future();
  runner.start(std::move(spec), [&p](process_outcome o) { p.set_value(std::move(o)); });
  return f.get();
}

} // namespace leap::env
