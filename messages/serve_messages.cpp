#include "messages/serve_messages.hpp"

namespace leap::msg {

const char* to_string(serve_status s) {
  switch (s) {
    case serve_status::ok: return "ok";
    case serve_status::bad_request: return "bad_request";
    case serve_status::not_found: return "not_found";
    case serve_status::conflict: return "conflict";
    case serve_status::busy: return "busy";
    case serve_status::failed: return "failed";
  }
  return "failed";
}

const char* to_string(attempt_state s) {
  switch (s) {
    case attempt_state::running: return "running";
    case attempt_state::awaiting_turn: return "awaiting_turn";
    case attempt_state::ended: return "ended";
  }
  return "ended";
}

} // namespace leap::msg
