// One all-reduce of four maxima: "some client still runs", the largest and (negated) the
// smallest iteration the running clients end, "some client dropped data or stopped".
#include "storing/writers_step.hpp"

#include <climits>

#include "common/agreement.hpp"
#include "plugins/store.hpp"

namespace sidecore::storing {

writers_step agree_on_step(MPI_Comm writers, int iteration, bool stopped, bool incomplete) {
  // A stopped writer's iterations are INT_MIN, which neither bound can pick.
  int values[4] = {stopped ? 0 : 1, stopped ? INT_MIN : iteration, stopped ? INT_MIN : -iteration,
                   incomplete || stopped ? 1 : 0};
  max_everywhere_quietly(values, 4, writers);
  writers_step agreed;
  agreed.all_stopped = values[0] == 0;
  // Once all stopped, values[2] is INT_MIN, which cannot be negated.
  agreed.in_step = agreed.all_stopped || values[1] == -values[2];
  agreed.iteration = values[1];
  agreed.any_incomplete = values[3] != 0;
  return agreed;
}

bool writers_in_step(const config::model& model) {
  if (!model.action_plugins.empty()) return true;
  for (const config::store& st : model.stores) {
    const plugins::store_needs needs = plugins::needs_of(model, st);
    if (needs.collective_writes || needs.writers_exchange) return true;
  }
  return false;
}

const config::store* first_collective_store(const config::model& model) {
  for (const config::store& st : model.stores)
    if (plugins::needs_of(model, st).collective_writes) return &st;
  return nullptr;
}

}  // namespace sidecore::storing
