// Names in the cluster's TLS certificates (docs/cluster.md, "Security"). CAF 0.17's OpenSSL
// module checks only that the peer's certificate chains to cluster.tls_ca; it has no hook for a
// host name check (caf::openssl::session builds its SSL_CTX privately and calls
// SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr)). leap
// therefore defines SSL_CTX_set_verify itself (tls_names.cpp): when the caller is
// libcaf_openssl, it installs a verify callback, otherwise (Beast in `leap serve`, anything
// else) it passes the call to OpenSSL unchanged. The callback runs inside OpenSSL's own chain
// verification of the very connection CAF uses, so a refused peer fails the handshake and the
// connection is never used. The names are compared with OpenSSL's X509_check_host and
// X509_check_ip_asc (subject alternative names; the common name only when the certificate has
// no DNS name).
//
// The rule:
// - a connection this process dials (a head to a node, a node to a head's cluster.listen) is
//   accepted when the peer's certificate names the host dialled (as written in cluster.nodes or
//   --join: a DNS name or an IP address), or one of cluster.tls_peer_names;
// - a connection this process accepts is accepted when cluster.tls_peer_names is empty (any
//   certificate of the CA, as before), otherwise only when the certificate names one of them.
//
// Call configure() and dialling() from any thread (a mutex guards the tables); the callback runs
// on CAF's multiplexer thread and reports refusals of accepted connections through the log
// function, and those of dialled ones through refusal() to the thread that dialled.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace leap::runtime::tls_names {

// Arms the check (called by configure_transport when TLS is on): the configured names and where
// refusals of incoming connections are logged (null: stderr).
void configure(std::vector<std::string> peer_names, std::function<void(const std::string&)> log = {});

// Before dialling host:port: remembers, for each address `host` resolves to, which name the
// peer's certificate must carry.
void dialling(const std::string& host, std::uint16_t port);

// After a failed dial of host:port: why its certificate was refused, if it was (taken: a later
// call returns nothing until the next refusal).
std::optional<std::string> refusal(const std::string& host, std::uint16_t port);

} // namespace leap::runtime::tls_names
