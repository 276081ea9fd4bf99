// printf-style formatting into a std::string (g++ 12 has no <format>); the compiler checks the arguments.
#pragma once

#include <string>

namespace flashviz {

[[gnu::format(printf, 1, 2)]] std::string Sprintf(const char* format, ...);

// The shortest decimal text that reads back as the same double ("inf", "-inf", "nan" for non-finite values).
std::string ShortestDecimal(double value);

// Bytes as a human reads them: "512 B", "12.0 KiB", "3.41 MiB", "1.20 GiB".
std::string HumanBytes(double bytes);
// Seconds as a human reads them, three significant digits: "7.50 ps", "850 ns", "12.3 µs", "4.56 ms", "1.23 s".
std::string HumanSeconds(double seconds);
// An nlohmann-json exception's message without its "[json.exception.parse_error.101] " prefix: the reason.
std::string JsonErrorReason(const std::string& what);

}  // namespace flashviz
