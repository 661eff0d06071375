#include "serve/serve.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>

#include "report/report.h"
#include "serve/page.h"
#include "serve/uploads.h"

namespace faultline {
namespace {

using Clock = std::chrono::steady_clock;
using httplib::Request;
using httplib::Response;
using HandlerResponse = httplib::Server::HandlerResponse;

// Answers that are data: nothing in them may load or run anything.
constexpr const char* kDataPolicy =
    "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
// The page: its own script and style only. Inline styles are allowed because the report, shown
// in a srcdoc frame that inherits this policy, carries its style inline.
constexpr const char* kPagePolicy =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' "
    "data:; connect-src 'self'; form-action 'self'; frame-src 'self'; base-uri 'none'; "
    "frame-ancestors 'none'";
// The report as a page of its own (the form posted without the script).
constexpr const char* kReportPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'";
// A form field other than a file or the paste (tz, min_severity, redact).
constexpr size_t kMaxFieldBytes = 1024;

// GET /api/v1/explain/ID and /api/v1/explain/xid/N: the route, and the check of a path before
// its body is read.
constexpr const char* kExplainRoute = R"(/api/v1/explain/(xid/[0-9]{1,6}|[A-Za-z0-9._-]{1,128}))";

const std::regex& explain_path() {
  static const std::regex path(kExplainRoute);
  return path;
}

void send_json_error(Response& res, int status, const std::string& message) {
  res.status = status;
  const nlohmann::json body = {
      {"error", message}, {"status", status}, {"schema", "faultline/http-error/v1"}};
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                  "application/json");
}

std::string base64(std::string_view bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) group |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) group |= static_cast<uint8_t>(bytes[i + 2]);
    out += kDigits[(group >> 18) & 63];
    out += kDigits[(group >> 12) & 63];
    out += i + 1 < bytes.size() ? kDigits[(group >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[group & 63] : '=';
  }
  return out;
}

enum class Format { kJson, kMarkdown, kHtml, kText, kPage };

// ?format= first, then the first of the known media types in Accept; JSON when neither says.
std::optional<Format> requested_format(const Request& req) {
  static const std::vector<std::pair<std::string, Format>> kNames = {
      {"json", Format::kJson},
      {"markdown", Format::kMarkdown},
      {"html", Format::kHtml},
      {"text", Format::kText}};
  if (req.has_param("format")) {
    const std::string name = req.get_param_value("format");
    for (const auto& [known, format] : kNames) {
      if (name == known) return format;
    }
    return std::nullopt;
  }
  static const std::vector<std::pair<std::string, Format>> kTypes = {
      {"application/json", Format::kJson},
      {"text/markdown", Format::kMarkdown},
      {"text/html", Format::kHtml},
      {"text/plain", Format::kText}};
  const std::string accept = req.get_header_value("Accept");
  std::optional<Format> first;
  size_t first_at = std::string::npos;
  for (const auto& [type, format] : kTypes) {
    const size_t at = accept.find(type);
    if (at < first_at) {
      first_at = at;
      first = format;
    }
  }
  return first.value_or(Format::kJson);
}

// Raw bodies: a log as it is, compressed or an archive. faultline reads what the bytes are; the
// type only keeps out what is plainly no log (an image, a PDF). curl --data-binary sends
// application/x-www-form-urlencoded unless told otherwise.
bool raw_type_accepted(const std::string& content_type) {
  const std::string type = content_type.substr(0, content_type.find(';'));
  static const std::vector<std::string> kTypes = {"",
                                                  "application/octet-stream",
                                                  "application/x-www-form-urlencoded",
                                                  "application/gzip",
                                                  "application/x-gzip",
                                                  "application/x-bzip2",
                                                  "application/x-xz",
                                                  "application/zstd",
                                                  "application/x-zstd",
                                                  "application/x-tar",
                                                  "application/x-gtar",
                                                  "application/zip",
                                                  "application/x-zip-compressed",
                                                  "application/json",
                                                  "application/x-ndjson"};
  return type.starts_with("text/") || std::find(kTypes.begin(), kTypes.end(), type) != kTypes.end();
}

// Requests diagnosed at the same time, and those waiting for their turn.
class Gate {
 public:
  enum class Admission { kIn, kQueueFull, kTimedOut };

  Gate(size_t workers, size_t queue) : workers_(workers), queue_(queue) {}

  Admission Enter(Clock::duration wait) {
    std::unique_lock lock(mutex_);
    if (running_ < workers_) {
      ++running_;
      return Admission::kIn;
    }
    if (waiting_ >= queue_) return Admission::kQueueFull;
    ++waiting_;
    const bool turn = free_.wait_for(lock, wait, [&] { return running_ < workers_; });
    --waiting_;
    if (!turn) return Admission::kTimedOut;
    ++running_;
    return Admission::kIn;
  }

  // Requests being diagnosed, and waiting.
  std::pair<size_t, size_t> Load() {
    std::lock_guard lock(mutex_);
    return {running_, waiting_};
  }

  void Leave() {
    {
      std::lock_guard lock(mutex_);
      --running_;
    }
    free_.notify_one();
  }

 private:
  const size_t workers_;
  const size_t queue_;
  std::mutex mutex_;
  std::condition_variable free_;
  size_t running_ = 0;
  size_t waiting_ = 0;
};

class Turn {
 public:
  explicit Turn(Gate* gate) : gate_(gate) {}
  ~Turn() { gate_->Leave(); }
  Turn(const Turn&) = delete;
  Turn& operator=(const Turn&) = delete;

 private:
  Gate* gate_;
};

// What one diagnose request asked for, besides its files.
struct Fields {
  std::string tz;
  std::string min_severity;
  std::string redact;
};

class Server {
 public:
  Server(const Catalog& catalog, const ServeOptions& options)
      : catalog_(catalog), options_(options), gate_(options.workers, options.queue) {}

  bool Run(std::string* error);

 private:
  HandlerResponse Screen(const Request& req, Response& res) const;
  bool Authorized(const Request& req) const;
  void Diagnose(const Request& req, Response& res, const httplib::ContentReader& reader, bool page);
  bool Receive(const Request& req, Response& res, const httplib::ContentReader& reader,
               UploadFolder* uploads, Fields* fields, Clock::time_point deadline) const;
  static void Answer(Response& res, Analysis& analysis, const Fields& fields, Format format);
  void Explain(const Request& req, Response& res) const;

  const Catalog& catalog_;
  const ServeOptions& options_;
  Gate gate_;
  httplib::Server http_;
};

bool Server::Authorized(const Request& req) const {
  if (options_.token.empty()) return true;
  const std::string expected = "Bearer " + options_.token;
  const std::string given = req.get_header_value("Authorization");
  // Compared in time that does not depend on where they differ.
  unsigned char differ = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    differ |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  }
  return differ == 0;
}

// Runs before any body is read: refuses what is too large, what is not a path of the server and
// what lacks the token, so that none of it costs more than its headers.
HandlerResponse Server::Screen(const Request& req, Response& res) const {
  if (req.has_header("Content-Length")) {
    const std::string length = req.get_header_value("Content-Length");
    const uint64_t declared = std::strtoull(length.c_str(), nullptr, 10);
    if (declared > options_.max_body || length.size() > 20) {
      send_json_error(res, 413,
                      "the body is larger than this server takes (" +
                          std::to_string(options_.max_body) +
                          " bytes); run faultline diagnose on the files instead");
      return HandlerResponse::Handled;
    }
  }
  const std::string& path = req.path;
  const bool page = path == "/" || path == "/app.js" || path == "/app.css" || path == "/healthz";
  const bool post = path == "/api/v1/diagnose" || path == "/diagnose";
  const bool explain = std::regex_match(path, explain_path());
  const bool reading = req.method == "GET" || req.method == "HEAD";
  if (!page && !post && !explain) {
    send_json_error(res, 404,
                    "no such path: the API is POST /api/v1/diagnose, GET /api/v1/explain/ID");
    return HandlerResponse::Handled;
  }
  if ((post && req.method != "POST") || (!post && !reading)) {
    send_json_error(res, 405, req.method + " is not served here");
    res.set_header("Allow", post ? "POST" : "GET, HEAD");
    return HandlerResponse::Handled;
  }
  if (!page && !Authorized(req)) {
    send_json_error(res, 401, "this server wants a token: Authorization: Bearer TOKEN");
    res.set_header("WWW-Authenticate", "Bearer");
    return HandlerResponse::Handled;
  }
  return HandlerResponse::Unhandled;
}

bool Server::Receive(const Request& req, Response& res, const httplib::ContentReader& reader,
                     UploadFolder* uploads, Fields* fields, Clock::time_point deadline) const {
  int status = 0;
  std::string message;
  Clock::time_point last_data = Clock::now();
  const auto fail = [&](int code, std::string why) {
    if (status == 0) {
      status = code;
      message = std::move(why);
    }
    return false;
  };
  // Every chunk of the body: within the request's size and time, written to the file it is part of.
  const auto take = [&](const char* data, size_t size, std::string* field) {
    last_data = Clock::now();
    if (last_data > deadline) {
      return fail(408, "the upload took longer than " +
                           std::to_string(static_cast<int>(options_.request_seconds)) +
                           " s, the most a request may take");
    }
    if (field) {
      if (field->size() + size > kMaxFieldBytes) return fail(400, "a form field is too long");
      field->append(data, size);
      return true;
    }
    if (uploads->bytes() + size > options_.max_body) {
      return fail(413, "the body is larger than this server takes (" +
                           std::to_string(options_.max_body) + " bytes)");
    }
    std::string error;
    return uploads->Write(data, size, &error) || fail(503, error);
  };
  bool read = false;
  if (req.is_multipart_form_data()) {
    std::string* field = nullptr;
    std::string ignored;
    // The paste's file is made when its first text comes: an empty paste box is no input.
    bool paste_pending = false;
    read = reader(
        [&](const httplib::MultipartFormData& part) {
          field = nullptr;
          paste_pending = false;
          if (!part.filename.empty() || part.name == "log") {
            if (uploads->count() == options_.max_files) {
              return fail(
                  413, "more than " + std::to_string(options_.max_files) + " files in one request");
            }
            paste_pending = part.filename.empty();
            std::string error;
            return paste_pending || uploads->Add(shown_name(part.filename), &error) ||
                   fail(503, error);
          }
          field = part.name == "tz"             ? &fields->tz
                  : part.name == "min_severity" ? &fields->min_severity
                  : part.name == "redact"       ? &fields->redact
                                                : &ignored;
          field->clear();
          return true;
        },
        [&](const char* data, size_t size) {
          if (size == 0) return true;  // httplib hands on an empty part as one empty chunk
          std::string error;
          if (paste_pending && !uploads->Add("pasted", &error)) return fail(503, error);
          paste_pending = false;
          return take(data, size, field);
        });
  } else {
    std::string error;
    if (!uploads->Add(req.has_param("name") ? shown_name(req.get_param_value("name")) : "upload",
                      &error)) {
      send_json_error(res, 503, error);
      return false;
    }
    read = reader([&](const char* data, size_t size) { return take(data, size, nullptr); });
  }
  if (read && status == 0) return true;
  if (status == 0) {
    const double idle = std::chrono::duration<double>(Clock::now() - last_data).count();
    if (idle >= options_.read_seconds) {
      status = 408;
      message = "nothing came for " + std::to_string(static_cast<int>(options_.read_seconds)) +
                " s: the upload was cut off";
    } else if (res.status == 413 || res.status == 415) {
      status = res.status;
      message = status == 413 ? "the body is larger than this server takes"
                              : "the body's Content-Encoding is not one this server reads";
    } else {
      status = 400;
      message = "the body could not be read: cut off, or not well-formed multipart/form-data";
    }
  }
  send_json_error(res, status, message);
  return false;
}

void Server::Diagnose(const Request& req, Response& res, const httplib::ContentReader& reader,
                      bool page) {
  const Clock::time_point start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(options_.request_seconds));
  const std::optional<Format> format = page ? Format::kPage : requested_format(req);
  if (!format) {
    send_json_error(res, 400, "format: one of json, markdown, html, text");
    return;
  }
  const std::string content_type = req.get_header_value("Content-Type");
  if (!req.is_multipart_form_data() && !raw_type_accepted(content_type)) {
    send_json_error(
        res, 415,
        "Content-Type " + content_type +
            " is not a log: send the log's bytes as they are (any compression, an archive) "
            "or multipart/form-data");
    return;
  }
  switch (gate_.Enter(std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.queue_seconds)))) {
    case Gate::Admission::kIn:
      break;
    case Gate::Admission::kQueueFull:
      send_json_error(res, 429, "too many requests are waiting; try again in a few seconds");
      res.set_header("Retry-After", "5");
      return;
    case Gate::Admission::kTimedOut:
      send_json_error(res, 503,
                      "every worker stayed busy while this request waited; try again later");
      res.set_header("Retry-After", "10");
      return;
  }
  const Turn turn(&gate_);
  std::string error;
  const std::unique_ptr<UploadFolder> uploads = UploadFolder::Create(&error);
  if (!uploads) {
    send_json_error(res, 503, error);
    return;
  }
  Fields fields{req.get_param_value("tz"), req.get_param_value("min_severity"),
                req.get_param_value("redact")};
  if (!Receive(req, res, reader, uploads.get(), &fields, deadline)) return;
  if (uploads->bytes() == 0) {
    send_json_error(res, 400, "nothing to diagnose: paste a log or add files");
    return;
  }
  AnalyzeOptions analyze_options;
  analyze_options.max_bytes = options_.max_bytes;
  analyze_options.deadline = deadline;
  if (!fields.tz.empty()) {
    analyze_options.tz = TimeZone::Parse(fields.tz);
    if (!analyze_options.tz) {
      send_json_error(res, 400,
                      "tz: '" + printable(fields.tz) +
                          "' is not a time zone (UTC, +02:00, or a tz database name like "
                          "Europe/Berlin)");
      return;
    }
  }
  Analysis analysis = analyze(uploads->Close(), catalog_, analyze_options);
  if (Clock::now() >= deadline) {
    send_json_error(res, 413,
                    "diagnosing this took longer than the " +
                        std::to_string(static_cast<int>(options_.request_seconds)) +
                        " s a request may take: send less, or run faultline diagnose on it");
    return;
  }
  uploads->ShowNames(&analysis);
  Answer(res, analysis, fields, *format);
}

void Server::Answer(Response& res, Analysis& analysis, const Fields& fields, Format format) {
  Filter filter;
  if (!fields.min_severity.empty()) {
    filter.min_severity = parse_severity(fields.min_severity);
    if (!filter.min_severity) {
      send_json_error(res, 400, "min_severity: one of info, warning, error, critical");
      return;
    }
  }
  apply_filter(filter, &analysis);
  if (fields.redact == "on" || fields.redact == "1" || fields.redact == "true") redact(&analysis);
  if (analysis.readable_inputs == 0) {
    send_json_error(res, 400,
                    "no input could be read" +
                        (analysis.warnings.empty() ? "" : ": " + analysis.warnings.front()));
    return;
  }
  std::ostringstream out;
  switch (format) {
    case Format::kJson:
      render_json(analysis, out);
      res.set_content(out.str(), "application/json");
      break;
    case Format::kMarkdown:
      render_markdown(analysis, out);
      res.set_content(out.str(), "text/markdown; charset=utf-8");
      break;
    case Format::kText: {
      TextOptions text;
      text.verbose = true;
      text.width = 0;
      render_text(analysis, text, out);
      res.set_content(out.str(), "text/plain; charset=utf-8");
      break;
    }
    case Format::kHtml:
      render_html(analysis, out);
      res.set_content(out.str(), "text/html; charset=utf-8");
      res.set_header("Content-Security-Policy", kReportPolicy);
      break;
    case Format::kPage: {
      // The report, with the same result as JSON and Markdown to download: nothing is kept on
      // the server to link to, so the links carry the documents themselves.
      render_html(analysis, out);
      std::string html = out.str();
      std::ostringstream json;
      std::ostringstream markdown;
      render_json(analysis, json);
      render_markdown(analysis, markdown);
      const std::string links =
          R"(<nav class="downloads">Download this result as <a download="faultline.json" )"
          R"(href="data:application/json;base64,)" +
          base64(json.str()) +
          R"(">JSON</a> or <a download="faultline.md" href="data:text/markdown;base64,)" +
          base64(markdown.str()) + R"(">Markdown</a></nav>)" + "\n";
      const size_t body = html.find("<body>\n");
      html.insert(body == std::string::npos ? 0 : body + 7, links);
      res.set_content(html, "text/html; charset=utf-8");
      res.set_header("Content-Security-Policy", kReportPolicy);
      break;
    }
  }
}

void Server::Explain(const Request& req, Response& res) const {
  const std::string id = req.matches[1];
  std::ostringstream out;
  if (id.starts_with("xid/")) {
    render_xid_entry(std::stoi(id.substr(4)), catalog_, out);
  } else {
    const FailureClass* failure = catalog_.knowledge.find_class(id);
    if (!failure) {
      send_json_error(res, 404, "no diagnosis '" + id + "'");
      return;
    }
    render_class_entry(*failure, out);
  }
  res.set_content(out.str(), "text/plain; charset=utf-8");
}

bool Server::Run(std::string* error) {
  const size_t threads = options_.workers + options_.queue + 4;
  http_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http_.set_payload_max_length(options_.max_body);
  // httplib's default also sets SO_REUSEPORT, which lets a second server bind the same port and
  // take half its connections: a port in use must be an error instead.
  http_.set_socket_options([](int sock) {
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  const auto seconds = [](double value) {
    return std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::duration<double>(value));
  };
  http_.set_read_timeout(seconds(options_.read_seconds));
  http_.set_write_timeout(seconds(options_.read_seconds));
  // One request per connection: an answer sent before its body was read (413, 404, 401) must
  // close the connection, or the body would be read as the next request, and httplib keeps a
  // connection open whatever the answer says.
  http_.set_keep_alive_max_count(1);
  http_.set_default_headers({{"X-Content-Type-Options", "nosniff"},
                             {"Referrer-Policy", "no-referrer"},
                             {"X-Frame-Options", "DENY"},
                             {"Cache-Control", "no-store"},
                             {"Cross-Origin-Resource-Policy", "same-origin"},
                             {"Cross-Origin-Opener-Policy", "same-origin"}});
  http_.set_pre_routing_handler(
      [this](const Request& req, Response& res) { return Screen(req, res); });
  http_.set_post_routing_handler([](const Request&, Response& res) {
    if (!res.has_header("Content-Security-Policy")) {
      res.set_header("Content-Security-Policy", kDataPolicy);
    }
  });
  // Every error is JSON with a message, the ones httplib answers itself too.
  http_.set_error_handler(httplib::Server::HandlerWithResponse([](const Request&, Response& res) {
    if (res.body.empty()) {
      send_json_error(res, res.status,
                      res.status == 404   ? "no such path"
                      : res.status == 413 ? "the body is larger than this server takes"
                      : res.status == 415
                          ? "the body's Content-Encoding is not one this server reads"
                          : "the request could not be read");
    }
    if (!res.has_header("Content-Security-Policy")) {
      res.set_header("Content-Security-Policy", kDataPolicy);
    }
    return HandlerResponse::Handled;
  }));
  http_.set_exception_handler([](const Request&, Response& res, const std::exception_ptr&) {
    send_json_error(res, 500, "internal error");
  });
  const std::string page = serve_page(!options_.token.empty());
  http_.Get("/", [&page](const Request&, Response& res) {
    res.set_content(page, "text/html; charset=utf-8");
    res.set_header("Content-Security-Policy", kPagePolicy);
  });
  http_.Get("/app.js", [](const Request&, Response& res) {
    res.set_content(std::string(serve_script()), "text/javascript; charset=utf-8");
  });
  http_.Get("/app.css", [](const Request&, Response& res) {
    res.set_content(std::string(serve_style()), "text/css; charset=utf-8");
  });
  http_.Get("/healthz", [this](const Request&, Response& res) {
    const auto [running, waiting] = gate_.Load();
    const nlohmann::json health = {{"status", "ok"}, {"running", running}, {"waiting", waiting}};
    res.set_content(health.dump() + "\n", "application/json");
  });
  http_.Get(kExplainRoute, [this](const Request& req, Response& res) { Explain(req, res); });
  http_.Post("/api/v1/diagnose",
             [this](const Request& req, Response& res, const httplib::ContentReader& reader) {
               Diagnose(req, res, reader, false);
             });
  http_.Post("/diagnose",
             [this](const Request& req, Response& res, const httplib::ContentReader& reader) {
               Diagnose(req, res, reader, true);
             });
  int port = options_.port;
  if (port == 0) {
    port = http_.bind_to_any_port(options_.host);
  } else if (!http_.bind_to_port(options_.host, port)) {
    port = -1;
  }
  if (port < 0) {
    *error = "cannot listen on " + options_.host + ":" + std::to_string(options_.port) + ": " +
             std::strerror(errno);
    return false;
  }
  const bool ipv6 = options_.host.find(':') != std::string::npos;
  if (options_.listening) {
    options_.listening("http://" + (ipv6 ? "[" + options_.host + "]" : options_.host) + ":" +
                           std::to_string(port) + "/",
                       [this] { http_.stop(); });
  }
  return http_.listen_after_bind();
}

}  // namespace

bool serve(const Catalog& catalog, const ServeOptions& options, std::string* error) {
  Server server(catalog, options);
  return server.Run(error);
}

}  // namespace faultline
