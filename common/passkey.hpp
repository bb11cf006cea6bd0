// passkey<T>: a constructor argument that only T itself can make. A class whose objects must
// come from its own factory (`create()`, which may fail and returns result<unique_ptr<T>>)
// declares its constructor public but taking passkey<T>, so the factory can call
// std::make_unique<T>(passkey<T>()) instead of a raw `new` on a private constructor. Header-only;
// no state, any thread.
#pragma once

namespace leap {

template <class T>
class passkey {
  friend T;
  // User-provided (not `= default`): otherwise passkey<T>{} would be aggregate initialisation,
  // which anyone may do in C++17.
  passkey() {}
};

} // namespace leap
