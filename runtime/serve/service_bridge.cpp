#include "runtime/serve/service_bridge.hpp"

#include "common/json_text.hpp"
#include "common/prometheus.hpp"
#include "env/task.hpp"
#include "messages/error_text.hpp"
#include "runtime/serve/api.hpp"
#include "runtime/serve/openenv.hpp"

#include <caf/all.hpp>

#include <cmath>
#include <random>

namespace leap::serve {

namespace {

http_response json_response(int status, std::string body, const route& r) {
  http_response res;
  res.status = status;
  res.body = std::move(body);
  res.route = r.label();
  return res;
}

http_response problem_response(int status, const std::string& message, const route& r) {
  return json_response(status, error_body(status, message), r);
}

// A service answer with a status: its HTTP status, and its error body unless ok.
template <class Answer, class Render>
http_response from_answer(const Answer& a, const route& r, Render render) {
  if (a.status == msg::serve_status::ok)
    return json_response(200, render(a), r);
  auto res = problem_response(http_status(a.status), a.message, r);
  if (a.status == msg::serve_status::busy)
    res.retry_after = static_cast<int>(std::max(1.0, std::ceil(a.retry_after)));
  return res;
}

struct bridge {
  caf::actor_system& sys;
  msg::env_service_actor service;
  std::shared_ptr<const std::map<std::string, env::task_spec>> tasks;
  std::shared_ptr<prom::registry> metrics;
  bridge_options opts;
  std::shared_ptr<openenv::episode_table> episodes;

  static http_response openenv_problem(int status, const std::string& message, const route& r) {
    return json_response(status, openenv::error_body(status, message), r);
  }

  // POST /reset: a new episode; its observation is the task's turn-1 prompt.
  void openenv_reset(const http_request& req, const route& r, respond_fn respond) {
    auto call = openenv::parse_reset(req.body);
    if (!call)
      return respond(openenv_problem(422, call.message(), r));
    std::uint64_t seed = call->seed ? *call->seed
                                    : (static_cast<std::uint64_t>(std::random_device{}()) << 32)
                                        | std::random_device{}();
    auto task = openenv::pick_task(*call, seed, *tasks);
    if (!task)
      return respond(openenv_problem(call->task.empty() ? 422 : 404, task.message(), r));
    std::string id;
    if (auto p = episodes->open(call->episode_id, *task, id))
      return respond(openenv_problem(p->status, p->message, r));
    const auto& spec = tasks->at(*task);
    auto prompt = opts.first_prompt ? opts.first_prompt(spec) : std::string();
    respond(json_response(200, openenv::reset_body(id, *task, spec, seed, prompt), r));
  }

  // POST /step: the action as the episode's next turn (the first opens its one-attempt group).
  void openenv_step(const http_request& req, const route& r, respond_fn respond) {
    auto call = openenv::parse_step(req.body);
    if (!call)
      return respond(openenv_problem(422, call.message(), r));
    openenv::episode_table::ticket t;
    if (auto p = episodes->begin_step(call->episode_id, t))
      return respond(openenv_problem(p->status, p->message, r));
    auto eps = episodes;
    auto id = call->episode_id;
    auto turn = t.turn;
    auto on_answer = [=](const msg::group_answer& a) {
      if (a.status != msg::serve_status::ok) {
        // The group expired in the service: so has the episode.
        eps->end_step(id, std::nullopt, a.status == msg::serve_status::not_found && turn > 1);
        auto res = openenv_problem(http_status(a.status), a.message, r);
        if (a.status == msg::serve_status::busy)
          res.retry_after = static_cast<int>(std::max(1.0, std::ceil(a.retry_after)));
        return respond(std::move(res));
      }
      auto o = openenv::observe(id, a.g, turn);
      eps->end_step(id, o);
      respond(json_response(200, openenv::step_body(o), r));
    };
    auto on_error = [=](int status, const std::string& message) {
      eps->end_step(id, std::nullopt);
      respond(openenv_problem(status, message, r));
    };
    if (t.group.empty())
      return ask_with<msg::group_answer>(msg::group_atom_v,
                                         msg::group_call{t.task, {std::move(call->s)}}, on_answer,
                                         on_error);
    msg::turn_call tc;
    tc.group = t.group;
    tc.attempt = 0;
    tc.turn = t.turn;
    tc.s = std::move(call->s);
    ask_with<msg::group_answer>(msg::turn_atom_v, std::move(tc), on_answer, on_error);
  }

  // One call to the service from a short-lived actor; `on_answer` gets its answer, `on_error` an
  // HTTP status and message (a timeout, or the service failing).
  template <class Answer, class Atom, class Call, class OnAnswer, class OnError>
  void ask_with(Atom atom, Call call, OnAnswer on_answer, OnError on_error) {
    auto svc = service;
    auto timeout = opts.request_timeout;
    auto* s = &sys;
    sys.spawn([=](caf::event_based_actor* self) mutable {
      self->request(svc, timeout, atom, std::move(call))
        .then([=](Answer& a) { on_answer(a); },
              [=](caf::error& e) {
                if (e == caf::sec::request_timeout)
                  on_error(504, "the service did not answer within "
                                "serve.request_timeout_seconds; a turn may be sent again (it "
                                "is idempotent)");
                else
                  on_error(500, "the service failed: " + msg::error_text(e, *s));
              });
    });
  }

  // One call to the service from a short-lived actor; its answer (or a timeout) responds.
  template <class Answer, class Atom, class Call, class Render>
  void ask(const route& r, respond_fn respond, Atom atom, Call call, Render render) {
    ask_with<Answer>(
      atom, std::move(call), [=](Answer& a) { respond(from_answer(a, r, render)); },
      [=](int status, const std::string& message) {
        respond(problem_response(status, message, r));
      });
  }

  void metrics_page(const route& r, respond_fn respond) {
    auto svc = service;
    auto m = metrics;
    sys.spawn([=](caf::event_based_actor* self) {
      // Without the service's answer the page still shows every counter (gauges as last set).
      auto page = [=] {
        auto res = json_response(200, m->text(), r);
        res.content_type = "text/plain; version=0.0.4; charset=utf-8";
        respond(std::move(res));
      };
      self->request(svc, std::chrono::seconds(10), msg::stats_atom_v)
        .then(
          [=](msg::service_stats& s) {
            record_gauges(*m, s);
            page();
          },
          [=](caf::error&) { page(); });
    });
  }

  static void record_gauges(prom::registry& m, const msg::service_stats& s) {
    m.set("leap_groups_open", {}, s.groups_open);
    m.set("leap_groups_expired_total", {}, static_cast<double>(s.groups_expired));
    m.set("leap_jobs_waiting", {}, s.waiting_jobs);
    m.set("leap_jobs_in_flight", {{"stage", "compile"}}, s.compile_jobs);
    m.set("leap_jobs_in_flight", {{"stage", "execute"}}, s.exec_jobs);
    for (auto [name, p] : {std::pair<const char*, const msg::pool_stats*>{"compile", &s.compiler},
                           {"execute", &s.executor}}) {
      prom::labels l{{"pool", name}};
      m.set("leap_pool_workers", l, p->workers);
      m.set("leap_pool_busy_workers", l, p->busy);
      m.set("leap_pool_queue_depth", l, p->queued);
      m.set("leap_pool_completed_total", l, static_cast<double>(p->completed));
      m.set("leap_pool_cache_hits_total", l, static_cast<double>(p->cache_hits));
      m.set("leap_pool_retried_total", l, static_cast<double>(p->retried));
      m.set("leap_pool_failed_total", l, static_cast<double>(p->failed));
      m.set("leap_pool_worker_restarts_total", l, static_cast<double>(p->worker_restarts));
    }
  }

  void handle(http_request req, respond_fn respond) {
    auto r = match(req.method, req.target);
    switch (r.kind) {
      case route_kind::unknown:
        return respond(problem_response(404, "no such path: " + req.method + " " + req.target
                                               + " (see docs/serve.md)",
                                        r));
      case route_kind::wrong_method: {
        auto res = problem_response(405, req.method + " is not allowed here; use " + r.allow, r);
        res.allow = r.allow;
        return respond(std::move(res));
      }
      case route_kind::health: {
        bool draining = opts.draining && opts.draining();
        nlohmann::json j{{"schema", schema_version},
                         {"status", draining ? "draining" : "ok"},
                         {"backend", opts.backend},
                         {"version", opts.version},
                         {"tasks", tasks->size()}};
        return respond(json_response(draining ? 503 : 200, dump_lossy(j), r));
      }
      case route_kind::metrics: return metrics_page(r, std::move(respond));
      case route_kind::tasks: return respond(json_response(200, tasks_body(*tasks), r));
      case route_kind::task: {
        auto it = tasks->find(r.name);
        if (it == tasks->end())
          return respond(problem_response(404, "unknown task '" + r.name + "'", r));
        auto prompt = opts.first_prompt ? opts.first_prompt(it->second) : std::string();
        return respond(json_response(200, task_body(it->second, prompt), r));
      }
      case route_kind::check: {
        auto call = parse_check(req.body);
        if (!call)
          return respond(problem_response(400, call.message(), r));
        return ask<msg::check_answer>(r, std::move(respond), msg::check_atom_v, std::move(*call),
                                      [](const msg::check_answer& a) { return check_body(a.v); });
      }
      case route_kind::open_group: {
        auto call = parse_group(req.body, opts.max_group_size);
        if (!call)
          return respond(problem_response(400, call.message(), r));
        return ask<msg::group_answer>(r, std::move(respond), msg::group_atom_v, std::move(*call),
                                      [](const msg::group_answer& a) { return group_body(a.g); });
      }
      case route_kind::turn: {
        auto call = parse_turn(req.body, r.name);
        if (!call)
          return respond(problem_response(400, call.message(), r));
        return ask<msg::group_answer>(r, std::move(respond), msg::turn_atom_v, std::move(*call),
                                      [](const msg::group_answer& a) { return group_body(a.g); });
      }
      case route_kind::completions:
      case route_kind::chat_completions:
      case route_kind::models: {
        if (opts.openai)
          return opts.openai(std::move(req), std::move(respond));
        auto res = json_response(
          404,
          dump_lossy(nlohmann::json{
            {"error",
             {{"message", "no model is served here: start `leap serve --checkpoint DIR` to answer "
                          "the OpenAI-compatible " + req.method + " " + req.target.substr(0, req.target.find('?'))},
              {"type", "invalid_request_error"},
              {"param", nullptr},
              {"code", "model_not_found"}}}}),
          r);
        return respond(std::move(res));
      }
      case route_kind::openenv_health: {
        bool draining = opts.draining && opts.draining();
        return respond(json_response(draining ? 503 : 200, openenv::health_body(draining), r));
      }
      case route_kind::openenv_metadata:
        return respond(json_response(200, openenv::metadata_body(opts.version), r));
      case route_kind::openenv_schema:
        return respond(json_response(200, openenv::schema_body(), r));
      case route_kind::openenv_reset: return openenv_reset(req, r, std::move(respond));
      case route_kind::openenv_step: return openenv_step(req, r, std::move(respond));
      case route_kind::openenv_state: {
        auto id = openenv::state_query(req.target);
        if (!id)
          return respond(openenv_problem(422, id.message(), r));
        std::string body;
        if (auto p = episodes->state(*id, body))
          return respond(openenv_problem(p->status, p->message, r));
        return respond(json_response(200, std::move(body), r));
      }
      case route_kind::view_group:
        return ask<msg::group_answer>(r, std::move(respond), msg::view_atom_v, r.name,
                                      [](const msg::group_answer& a) { return group_body(a.g); });
    }
  }
};

} // namespace

void declare_bridge_metrics(prom::registry& m) {
  m.declare("leap_groups_open", "LEAP groups open (not expired).", prom::kind::gauge);
  m.declare("leap_groups_expired_total", "Groups that expired idle.", prom::kind::counter);
  m.declare("leap_jobs_waiting", "Jobs queued beyond the workers (429 at serve.max_queue).",
            prom::kind::gauge);
  m.declare("leap_jobs_in_flight", "Jobs the service has sent to a pool, by stage.",
            prom::kind::gauge);
  m.declare("leap_pool_workers", "Workers of each pool.", prom::kind::gauge);
  m.declare("leap_pool_busy_workers", "Busy workers of each pool.", prom::kind::gauge);
  m.declare("leap_pool_queue_depth", "Jobs queued in each pool.", prom::kind::gauge);
  m.declare("leap_pool_completed_total", "Jobs each pool completed.", prom::kind::counter);
  m.declare("leap_pool_cache_hits_total", "Jobs each pool answered from its cache.",
            prom::kind::counter);
  m.declare("leap_pool_retried_total", "Tries repeated after an infrastructure failure.",
            prom::kind::counter);
  m.declare("leap_pool_failed_total", "Jobs that failed on every try.", prom::kind::counter);
  m.declare("leap_pool_worker_restarts_total", "Workers restarted after a crash.",
            prom::kind::counter);
}

handler_fn make_service_handler(caf::actor_system& sys, msg::env_service_actor service,
                                std::shared_ptr<const std::map<std::string, env::task_spec>> tasks,
                                std::shared_ptr<prom::registry> metrics, bridge_options opts) {
  auto episodes = std::make_shared<openenv::episode_table>(opts.max_episodes, opts.episode_ttl);
  auto b = std::make_shared<bridge>(bridge{sys, std::move(service), std::move(tasks),
                                           std::move(metrics), std::move(opts),
                                           std::move(episodes)});
  return [b](http_request req, respond_fn respond) { b->handle(std::move(req), std::move(respond)); };
}

} // namespace leap::serve
