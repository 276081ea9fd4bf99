// The one error type a user's mistake raises: a bad option, a malformed or missing file, an output that cannot
// be written. Its message is one line, fit for stderr or for the GUI's status line.
#pragma once

#include <stdexcept>

namespace flashviz {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace flashviz
