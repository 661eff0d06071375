// `faultline serve`: the diagnosis as a web page and an HTTP API, for one engineer's laptop or
// a team's internal host. Uploads go through the same pipeline and renderers as the command
// line; nothing is kept once the answer is sent.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "pipeline/pipeline.h"

namespace faultline {

struct ServeOptions {
  std::string host = "127.0.0.1";  // the address to listen on; loopback unless told otherwise
  int port = 8080;                 // 0: any free port (the URL printed names it)
  std::string token;               // when set, /api/ and the page's form want "Bearer TOKEN"
  uint64_t max_body = uint64_t{256} << 20;  // bytes of one request's body, as sent
  uint64_t max_bytes = uint64_t{1} << 30;   // decompressed text read per input (--max-bytes)
  size_t max_files = 32;                    // files in one multipart request
  double request_seconds = 60;              // receiving and diagnosing one request, together
  double read_seconds = 10;                 // a client that sends nothing for this long is cut off
  double queue_seconds = 10;                // a request waits this long for a worker before 503
  size_t workers = 2;                       // requests diagnosed at the same time
  size_t queue = 8;                         // requests waiting for a worker; beyond that, 429
  // Told the server's URL once it listens (the port is known only then with port 0), and how to
  // stop it: `stop` may be called from any thread; serve() then returns once the requests in
  // flight have been answered (and their uploads removed).
  std::function<void(const std::string& url, const std::function<void()>& stop)> listening;
};

// Listens and answers until stopped; false, with *error set to one line, when
// it cannot listen on the address.
bool serve(const Catalog& catalog, const ServeOptions& options, std::string* error);

}  // namespace faultline
