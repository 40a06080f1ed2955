// The one translation unit that defines graph::lower_graph (graph/lower.hpp): every other TU of janusc, of the tests
// and of the fuzz replays is built with JANUS_OUT_OF_LINE_LOWERING and only declares it.
#define JANUS_DEFINE_LOWERING 1
#include <janus/graph/lower.hpp>
