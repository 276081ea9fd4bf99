// The one error type a user's mistake raises: a bad option, a malformed or missing file, an output that cannot
// be written. Its message is one line, fit for stderr or for the GUI's status line.
#pragma once

#include <stdexcept>

namespace flashviz {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A mistake in the command line itself: an option that is unknown, missing, malformed, out of range or in conflict
// with another. The command line exits 2 for these, as is the convention, and 1 for what fails while running.
class UsageError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace flashviz
