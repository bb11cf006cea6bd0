#include "runtime/cluster/tls_names.hpp"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>

namespace leap::runtime::tls_names {
namespace {

struct tables {
  std::mutex mu;
  bool armed = false;
  std::vector<std::string> peer_names;
  std::function<void(const std::string&)> log;
  std::map<std::string, std::string> dialled;  // "address|port" -> the host as dialled
  std::map<std::string, std::string> refusals; // "host|port" as dialled -> why
};

tables& state() {
  static tables t;
  return t;
}

std::string key(const std::string& a, std::uint16_t port) {
  return a + "|" + std::to_string(port);
}

std::string unbracket(const std::string& h) {
  return h.size() > 2 && h.front() == '[' && h.back() == ']' ? h.substr(1, h.size() - 2) : h;
}

bool is_ip(const std::string& h) {
  unsigned char buf[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, h.c_str(), buf) == 1 || ::inet_pton(AF_INET6, h.c_str(), buf) == 1;
}

// OpenSSL's own matching: X509_check_ip_asc for an address, X509_check_host for a DNS name
// (subject alternative names; the common name only when there is no DNS name).
bool names(X509* cert, const std::string& name) {
  auto n = unbracket(name);
  if (is_ip(n))
    return X509_check_ip_asc(cert, n.c_str(), 0) == 1;
  return X509_check_host(cert, n.c_str(), n.size(), 0, nullptr) == 1;
}

std::string presented(X509* cert) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  if (auto* gens = static_cast<GENERAL_NAMES*>(
        X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr))) {
    for (int i = 0; i < sk_GENERAL_NAME_num(gens); ++i) {
      const GENERAL_NAME* g = sk_GENERAL_NAME_value(gens, i);
      if (g->type == GEN_DNS) {
        auto* d = ASN1_STRING_get0_data(g->d.dNSName);
        add("DNS:" + std::string(reinterpret_cast<const char*>(d), ASN1_STRING_length(g->d.dNSName)));
      } else if (g->type == GEN_IPADD) {
        char text[INET6_ADDRSTRLEN] = {};
        int len = ASN1_STRING_length(g->d.iPAddress);
        auto* d = ASN1_STRING_get0_data(g->d.iPAddress);
        if ((len == 4 && ::inet_ntop(AF_INET, d, text, sizeof text))
            || (len == 16 && ::inet_ntop(AF_INET6, d, text, sizeof text)))
          add(std::string("IP:") + text);
      }
    }
    GENERAL_NAMES_free(gens);
  }
  char cn[256] = {};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn) > 0)
    add(std::string("CN=") + cn);
  return out.empty() ? "no name" : out;
}

std::string quoted_list(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v)
    s += (s.empty() ? "\"" : ", \"") + x + "\"";
  return "[" + s + "]";
}

// The peer's address and port of a connected socket.
bool peer_of(int fd, std::string& addr, std::uint16_t& port) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (fd < 0 || ::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return false;
  char text[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    port = ntohs(a->sin6_port);
  } else {
    return false;
  }
  addr = text;
  return true;
}

// Called by OpenSSL for each certificate of the peer's chain; the leaf (depth 0) must carry an
// accepted name. Runs on CAF's multiplexer thread, inside the handshake.
int verify_names(int preverify_ok, X509_STORE_CTX* store) {
  if (!preverify_ok || X509_STORE_CTX_get_error_depth(store) != 0)
    return preverify_ok; // another CA, an expired certificate: OpenSSL's verdict stands
  auto* ssl = static_cast<SSL*>(
    X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  X509* cert = X509_STORE_CTX_get_current_cert(store);
  if (!ssl || !cert)
    return preverify_ok;
  std::string addr;
  std::uint16_t port = 0;
  bool known = peer_of(SSL_get_fd(ssl), addr, port);
  auto& t = state();
  std::unique_lock lock(t.mu);
  std::vector<std::string> accepted = t.peer_names;
  std::string dialled;
  bool server = SSL_is_server(ssl) == 1;
  if (!server) {
    auto it = known ? t.dialled.find(key(addr, port)) : t.dialled.end();
    dialled = it != t.dialled.end() ? it->second : addr;
    if (!dialled.empty())
      accepted.insert(accepted.begin(), dialled);
  } else if (accepted.empty()) {
    return 1; // incoming, no names configured: any certificate of the CA
  }
  for (auto& n : accepted)
    if (names(cert, n))
      return 1;
  auto shown = presented(cert);
  if (!server) {
    std::string why = "the certificate of " + dialled + ":" + std::to_string(port) + " names "
                      + shown + ", not " + dialled + " (the host dialled)"
                      + (t.peer_names.empty() ? ""
                                              : " nor any of cluster.tls_peer_names = "
                                                  + quoted_list(t.peer_names))
                      + ": refused (a certificate of the same CA issued for another machine; "
                        "issue one whose subjectAltName names " + dialled
                      + ", or add its name to cluster.tls_peer_names)";
    t.refusals[key(dialled, port)] = why; // the dialling side reports it (the node's problem)
  } else {
    std::string why = "refused a connection from " + (known ? addr + ":" + std::to_string(port) : std::string("an unknown peer"))
                      + ": its certificate names " + shown + ", none of cluster.tls_peer_names = "
                      + quoted_list(t.peer_names);
    auto log = t.log;
    lock.unlock();
    log ? log(why) : void(std::cerr << "leap: " << why << "\n");
  }
  X509_STORE_CTX_set_error(store, is_ip(unbracket(dialled)) ? X509_V_ERR_IP_ADDRESS_MISMATCH
                                                           : X509_V_ERR_HOSTNAME_MISMATCH);
  return 0;
}

} // namespace

void configure(std::vector<std::string> peer_names, std::function<void(const std::string&)> log) {
  auto& t = state();
  std::lock_guard lock(t.mu);
  t.armed = true;
  t.peer_names = std::move(peer_names);
  t.log = std::move(log);
}

void dialling(const std::string& host, std::uint16_t port) {
  auto h = unbracket(host);
  std::vector<std::string> addrs;
  if (is_ip(h)) {
    addrs.push_back(h);
  } else {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (::getaddrinfo(h.c_str(), nullptr, &hints, &res) == 0) {
      for (auto* a = res; a; a = a->ai_next) {
        char text[INET6_ADDRSTRLEN] = {};
        if (a->ai_family == AF_INET)
          ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr, text, sizeof text);
        else if (a->ai_family == AF_INET6)
          ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr, text,
                      sizeof text);
        if (*text)
          addrs.push_back(text);
      }
      ::freeaddrinfo(res);
    }
  }
  auto& t = state();
  std::lock_guard lock(t.mu);
  for (auto& a : addrs)
    t.dialled[key(a, port)] = h;
}

std::optional<std::string> refusal(const std::string& host, std::uint16_t port) {
  auto& t = state();
  std::lock_guard lock(t.mu);
  auto it = t.refusals.find(key(unbracket(host), port));
  if (it == t.refusals.end())
    return std::nullopt;
  auto why = it->second;
  t.refusals.erase(it);
  return why;
}

namespace {

// Is the check on, and is the caller CAF's OpenSSL module?
bool armed_for_caller(const void* return_address) {
  {
    auto& t = state();
    std::lock_guard lock(t.mu);
    if (!t.armed)
      return false;
  }
  Dl_info info{};
  return ::dladdr(return_address, &info) != 0 && info.dli_fname
         && std::strstr(info.dli_fname, "libcaf_openssl") != nullptr;
}

} // namespace

} // namespace leap::runtime::tls_names

// CAF's OpenSSL session calls this while it builds each connection's SSL_CTX (see the header):
// for that caller, with the check armed, the callback above joins OpenSSL's chain verification.
// Every other caller gets OpenSSL's function unchanged.
extern "C" void SSL_CTX_set_verify(SSL_CTX* ctx, int mode, SSL_verify_cb cb) {
  using fn = void (*)(SSL_CTX*, int, SSL_verify_cb);
  static fn real = reinterpret_cast<fn>(::dlsym(RTLD_NEXT, "SSL_CTX_set_verify"));
  if (!real) { // cannot happen while libssl is linked; never verify less than asked
    std::cerr << "leap: SSL_CTX_set_verify: OpenSSL's function not found\n";
    std::abort();
  }
  if ((mode & SSL_VERIFY_PEER) && cb == nullptr
      && leap::runtime::tls_names::armed_for_caller(__builtin_return_address(0)))
    cb = &leap::runtime::tls_names::verify_names;
  real(ctx, mode, cb);
}
