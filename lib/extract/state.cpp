#include "extract/state.h"

#include <utility>

#include "extract/state_csv.h"
#include "extract/state_fields.h"
#include "extract/state_query.h"

namespace faultline {

// Both readers see every line: each passes over what is not its own, and both append to
// one list, so snapshots stay in input order.
struct StateReader::Impl {
  explicit Impl(const std::string& path) : query(path, &states), csv(path, &states) {}

  std::vector<GpuState> states;
  state_detail::QueryTextReader query;
  state_detail::CsvQueryReader csv;
};

StateReader::StateReader(std::string path) : impl_(std::make_unique<Impl>(path)) {}
StateReader::~StateReader() = default;
StateReader::StateReader(StateReader&&) noexcept = default;
StateReader& StateReader::operator=(StateReader&&) noexcept = default;

void StateReader::Feed(std::string_view text, uint64_t line_number) {
  impl_->query.Feed(text, line_number);
  impl_->csv.Feed(text, line_number);
}

std::vector<GpuState> StateReader::Finish() {
  impl_->query.Finish();
  impl_->csv.Finish();
  return std::exchange(impl_->states, {});
}

bool is_state_field(std::string_view field) {
  return state_detail::IsQueryTextField(field);
}

}  // namespace faultline
