// How leap processes reach each other (docs/cluster.md): CAF's io middleman for plain TCP, CAF's
// OpenSSL module when [cluster] names TLS files (mutual authentication: each side presents a
// certificate signed by cluster.tls_ca and refuses a peer without one). Plain TCP is allowed on
// loopback addresses, elsewhere only with cluster.insecure (and a warning). Called on a
// command's main thread: configure_transport() before the actor system exists, the others after.
#pragma once

#include "common/host_port.hpp"
#include "common/result.hpp"
#include "messages/interfaces.hpp"
#include "runtime/config/config.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace caf {
class actor_system;
class actor_system_config;
} // namespace caf

namespace leap::runtime {

bool uses_tls(const config::cluster_section& c);

// Loads the middleman (and the OpenSSL manager with the TLS files, which must be readable).
result<void> configure_transport(caf::actor_system_config& cfg, const config::cluster_section& c);

// May `addr` be used (listened on or connected to) without TLS? An error says what to set; a
// non-loopback address with cluster.insecure gives a warning to print (none otherwise).
result<std::optional<std::string>> check_plain_allowed(const config::cluster_section& c, const host_port& addr,
                                        const std::string& key);

// A TCP port on `host` that is free now (the kernel's choice).
result<std::uint16_t> free_port(const std::string& host);

// Publishes a node at `addr` (its port must be set; SO_REUSEADDR, so a node restarted on its
// address while old connections linger in TIME_WAIT gets it back); returns the port.
result<std::uint16_t> publish_node(caf::actor_system& sys, const msg::node_actor& node,
                                   const host_port& addr, bool tls);
// The head's registration and status actor on cluster.listen (port 0: a free one).
result<std::uint16_t> publish_head(caf::actor_system& sys, const msg::head_actor& head,
                                   const host_port& addr, bool tls);

// A blocking connect to a head's cluster.listen.
result<msg::head_actor> connect_head(caf::actor_system& sys, const host_port& addr, bool tls);

// A blocking connect to a node (for actors::cluster_options::connect).
std::function<result<msg::node_actor>(const std::string&, std::uint16_t)>
node_connector(caf::actor_system& sys, bool tls);

} // namespace leap::runtime
