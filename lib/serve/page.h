// The page of `faultline serve` and its script and style, compiled into the binary.
#pragma once

#include <string>
#include <string_view>

namespace faultline {

// The page at /: the paste box, the file picker and drop zone, the options and the form, which
// works without the script. `token_field`: the server wants a token, so the page asks for one.
std::string serve_page(bool token_field);
// /app.js: sends the form with upload progress and shows the report in the page.
std::string_view serve_script();
// /app.css
std::string_view serve_style();

}  // namespace faultline
