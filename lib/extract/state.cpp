#include "extract/state.h"

#include <utility>

#include "extract/state_csv.h"
#include "extract/state_dcgmi.h"
#include "extract/state_exporter.h"
#include "extract/state_fields.h"
#include "extract/state_query.h"
#include "extract/state_xml.h"

namespace faultline {

// Every reader sees every line: each passes over what is not its own, and all append to one
// list as each dump ends, so snapshots stay in input order.
struct StateReader::Impl {
  explicit Impl(const std::string& path)
      : query(path, &states),
        csv(path, &states),
        xml(path, &states),
        exporter(path, &states),
        dcgmi(path, &states) {}

  std::vector<GpuState> states;
  state_detail::QueryTextReader query;
  state_detail::CsvQueryReader csv;
  state_detail::XmlDumpReader xml;
  state_detail::ExporterReader exporter;
  state_detail::DcgmiReader dcgmi;
};

StateReader::StateReader(const std::string& path) : impl_(std::make_unique<Impl>(path)) {}
StateReader::~StateReader() = default;
StateReader::StateReader(StateReader&&) noexcept = default;
StateReader& StateReader::operator=(StateReader&&) noexcept = default;

void StateReader::Feed(std::string_view text, uint64_t line_number) {
  // Most lines of most inputs belong to no dump: while none is open, a line reaches the readers
  // only if one of them may open a dump with it.
  Impl& r = *impl_;
  if (r.query.idle() && r.csv.idle() && r.xml.idle() && r.exporter.idle() && r.dcgmi.idle()) {
    const std::string_view line = state_detail::Trim(text);
    if (!state_detail::QueryTextReader::MayOpen(line) &&
        !state_detail::CsvQueryReader::MayOpen(line) &&
        !state_detail::XmlDumpReader::MayOpen(line) &&
        !state_detail::ExporterReader::MayOpen(line) && !state_detail::DcgmiReader::MayOpen(line)) {
      return;
    }
  }
  r.query.Feed(text, line_number);
  r.csv.Feed(text, line_number);
  r.xml.Feed(text, line_number);
  r.exporter.Feed(text, line_number);
  r.dcgmi.Feed(text, line_number);
}

std::vector<GpuState> StateReader::Finish() {
  impl_->query.Finish();
  impl_->csv.Finish();
  impl_->xml.Finish();
  impl_->exporter.Finish();
  impl_->dcgmi.Finish();
  return std::exchange(impl_->states, {});
}

bool is_state_field(std::string_view field) {
  return state_detail::IsQueryTextField(field) || state_detail::IsXmlField(field) ||
         state_detail::IsExporterField(field) || state_detail::IsDcgmiField(field);
}

}  // namespace faultline
