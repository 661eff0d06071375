#include "state/state.h"

#include <utility>

#include "state/csv.h"
#include "state/dcgmi.h"
#include "state/dmon.h"
#include "state/exporter.h"
#include "state/fields.h"
#include "state/nvlink.h"
#include "state/query.h"
#include "state/table.h"
#include "state/xml.h"

namespace faultline {

// Every reader sees every line: each passes over what is not its own, and all append to one
// list as each dump ends, so snapshots stay in input order.
struct StateReader::Impl {
  explicit Impl(const std::string& path)
      : query(path, &states),
        csv(path, &states),
        xml(path, &states),
        exporter(path, &states),
        dcgmi(path, &states),
        nvlink(path, &states),
        dmon(path, &states),
        table(path, &states) {}

  std::vector<GpuState> states;
  state_internal::QueryTextReader query;
  state_internal::CsvQueryReader csv;
  state_internal::XmlDumpReader xml;
  state_internal::ExporterReader exporter;
  state_internal::DcgmiReader dcgmi;
  state_internal::NvlinkReader nvlink;
  state_internal::DmonReader dmon;
  state_internal::TableReader table;
};

StateReader::StateReader(const std::string& path) : impl_(std::make_unique<Impl>(path)) {}
StateReader::~StateReader() = default;
StateReader::StateReader(StateReader&&) noexcept = default;
StateReader& StateReader::operator=(StateReader&&) noexcept = default;

bool StateReader::InDump() const {
  const Impl& r = *impl_;
  return !(r.query.idle() && r.csv.idle() && r.xml.idle() && r.exporter.idle() && r.dcgmi.idle() &&
           r.nvlink.idle() && r.dmon.idle() && r.table.idle());
}

void StateReader::Feed(std::string_view text, uint64_t line_number) {
  // Most lines of most inputs belong to no dump: while none is open, a line reaches the readers
  // only if one of them may open a dump with it.
  Impl& r = *impl_;
  if (!InDump()) {
    const std::string_view line = trim(text);
    if (!state_internal::QueryTextReader::MayOpen(line) &&
        !state_internal::CsvQueryReader::MayOpen(line) &&
        !state_internal::XmlDumpReader::MayOpen(line) &&
        !state_internal::ExporterReader::MayOpen(line) &&
        !state_internal::DcgmiReader::MayOpen(line) &&
        !state_internal::NvlinkReader::MayOpen(line) &&
        !state_internal::DmonReader::MayOpen(line) && !state_internal::TableReader::MayOpen(line)) {
      return;
    }
  }
  r.query.Feed(text, line_number);
  r.csv.Feed(text, line_number);
  r.xml.Feed(text, line_number);
  r.exporter.Feed(text, line_number);
  r.dcgmi.Feed(text, line_number);
  r.nvlink.Feed(text, line_number);
  r.dmon.Feed(text, line_number);
  r.table.Feed(text, line_number);
}

std::vector<GpuState> StateReader::Finish() {
  impl_->query.Finish();
  impl_->csv.Finish();
  impl_->xml.Finish();
  impl_->exporter.Finish();
  impl_->dcgmi.Finish();
  impl_->nvlink.Finish();
  impl_->dmon.Finish();
  impl_->table.Finish();
  return std::exchange(impl_->states, {});
}

bool is_state_field(std::string_view field) {
  return state_internal::IsQueryTextField(field) || state_internal::IsXmlField(field) ||
         state_internal::IsExporterField(field) || state_internal::IsDcgmiField(field) ||
         state_internal::IsNvlinkField(field) || state_internal::IsTableField(field);
}

}  // namespace faultline
