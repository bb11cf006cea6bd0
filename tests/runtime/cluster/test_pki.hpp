// Test certificates made by the openssl CLI the way docs/cluster.md tells users to make them,
// for the TLS tests (cluster transport, `leap serve` over HTTPS). Test code only; call it from the
// test's thread, it runs `openssl` as child processes and returns when they are done.
#pragma once

#include <cstdlib>
#include <fstream>
#include <string>

namespace leap::test {

// In `dir`: two CAs (ca, other_ca; NAME.pem and NAME.key) and, signed by them, node
// (IP:127.0.0.1, by ca), head (DNS:head.example, by ca), rogue (IP:127.0.0.1, by other_ca) and
// other (DNS:other.example, by ca). False when openssl failed.
inline bool make_pki(const std::string& dir) {
  auto sh = [&](const std::string& cmd) { return std::system(("cd " + dir + " && " + cmd + " >/dev/null 2>&1").c_str()) == 0; };
  auto ca = [&](const std::string& n) {
    return sh("openssl req -x509 -newkey rsa:2048 -nodes -keyout " + n + ".key -out " + n
              + ".pem -days 2 -subj /CN=" + n);
  };
  auto write_ext = [&](const std::string& file, const std::string& names) {
    std::ofstream out(dir + "/" + file);
    out << "subjectAltName=" << names << "\n";
    out.close(); // before openssl reads it
    return static_cast<bool>(out);
  };
  // `names`: the subjectAltName, the host names or addresses the machine is dialled by.
  auto cert = [&](const std::string& n, const std::string& by, const std::string& names) {
    return sh("openssl req -newkey rsa:2048 -nodes -keyout " + n + ".key -out " + n
              + ".csr -subj /CN=" + n)
           && write_ext(n + ".ext", names)
           && sh("openssl x509 -req -in " + n + ".csr -CA " + by + ".pem -CAkey " + by
                 + ".key -CAcreateserial -out " + n + ".pem -days 2 -extfile " + n + ".ext");
  };
  return ca("ca") && ca("other_ca") && cert("node", "ca", "IP:127.0.0.1")
         && cert("head", "ca", "DNS:head.example") && cert("rogue", "other_ca", "IP:127.0.0.1")
         && cert("other", "ca", "DNS:other.example");
}

} // namespace leap::test
