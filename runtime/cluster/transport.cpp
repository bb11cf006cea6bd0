#include "runtime/cluster/transport.hpp"

#include "runtime/cluster/tls_names.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

namespace leap::runtime {

bool uses_tls(const config::cluster_section& c) {
  return !c.tls_cert.empty() && !c.tls_key.empty() && !c.tls_ca.empty();
}

result<void> configure_transport(caf::actor_system_config& cfg, const config::cluster_section& c) {
  cfg.load<caf::io::middleman>();
  if (!uses_tls(c))
    return {};
  for (auto [key, path] : {std::pair<const char*, const std::string*>{"cluster.tls_cert", &c.tls_cert},
                           {"cluster.tls_key", &c.tls_key},
                           {"cluster.tls_ca", &c.tls_ca}}) {
    std::ifstream in(*path);
    if (!in)
      return make_error(std::string(key) + " = \"" + *path + "\": cannot read the file");
  }
  cfg.load<caf::openssl::manager>();
  cfg.openssl_certificate = c.tls_cert;
  cfg.openssl_key = c.tls_key;
  cfg.openssl_cafile = c.tls_ca;
  tls_names::configure(c.tls_peer_names);
  return {};
}

result<std::optional<std::string>> check_plain_allowed(const config::cluster_section& c,
                                                       const host_port& addr,
                                                       const std::string& key) {
  if (uses_tls(c) || is_loopback(addr.host))
    return std::optional<std::string>();
  if (!c.insecure)
    return make_error(key + " = \"" + addr.text() + "\" is not a loopback address: set "
                      "cluster.tls_cert, cluster.tls_key and cluster.tls_ca (docs/cluster.md), "
                      "or cluster.insecure = true to allow plain TCP");
  return std::optional<std::string>("warning: plain TCP (no TLS) on " + addr.text()
                                    + " (cluster.insecure = true): anyone who can reach it can "
                                      "send jobs or read candidates");
}

result<std::uint16_t> free_port(const std::string& host) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return make_error("cannot open a socket to find a free port");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = 0;
  if (host == "localhost" || ::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0
            && ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  ::close(fd);
  if (!ok)
    return make_error("cannot find a free port on " + host);
  return static_cast<std::uint16_t>(ntohs(a.sin_port));
}

namespace {

template <class Handle>
result<std::uint16_t> publish_actor(caf::actor_system& sys, const Handle& h, const host_port& addr,
                                    bool tls) {
  auto r = tls ? caf::openssl::publish(h, addr.port, addr.host.c_str(), true)
               : sys.middleman().publish(h, addr.port, addr.host.c_str(), true);
  if (!r)
    return make_error("cannot listen on " + addr.text() + ": " + sys.render(r.error()));
  return *r;
}

} // namespace

result<std::uint16_t> publish_node(caf::actor_system& sys, const msg::node_actor& node,
                                   const host_port& addr, bool tls) {
  return publish_actor(sys, node, addr, tls);
}

result<std::uint16_t> publish_head(caf::actor_system& sys, const msg::head_actor& head,
                                   const host_port& addr, bool tls) {
  return publish_actor(sys, head, addr, tls);
}

result<msg::head_actor> connect_head(caf::actor_system& sys, const host_port& addr, bool tls) {
  if (tls)
    tls_names::dialling(addr.host, addr.port);
  auto r = tls ? caf::openssl::remote_actor<msg::head_actor>(sys, addr.host, addr.port)
               : sys.middleman().remote_actor<msg::head_actor>(addr.host, addr.port);
  if (!r) {
    if (auto why = tls ? tls_names::refusal(addr.host, addr.port) : std::nullopt)
      return make_error("cannot reach the head at " + addr.text() + ": " + *why);
    return make_error("cannot reach the head at " + addr.text() + ": " + sys.render(r.error()));
  }
  return *r;
}

std::function<result<msg::node_actor>(const std::string&, std::uint16_t)>
node_connector(caf::actor_system& sys, bool tls) {
  return [&sys, tls](const std::string& host, std::uint16_t port) -> result<msg::node_actor> {
    if (tls)
      tls_names::dialling(host, port);
    auto r = tls ? caf::openssl::remote_actor<msg::node_actor>(sys, host, port)
                 : sys.middleman().remote_actor<msg::node_actor>(host, port);
    if (!r) {
      if (auto why = tls ? tls_names::refusal(host, port) : std::nullopt)
        return make_error(*why);
      auto text = sys.render(r.error());
      if (tls && text.find("disconnect_during_handshake") != std::string::npos)
        text += " (the node ended the TLS handshake: it does not accept this head's certificate "
                "(another CA, or a name outside its cluster.tls_peer_names; its log says which), "
                "or it does not speak TLS)";
      return make_error(text);
    }
    return *r;
  };
}

} // namespace leap::runtime
