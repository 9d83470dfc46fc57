/* not_a_plugin.c — a shared object on the plugin path that is not a plugin.
 *
 * Why: a stray .so in a plugin folder (a helper library, a wrong build) must
 * be refused with a sentence that says what is wrong, and must not stop the
 * other plugins or the command from working.
 * How: it exports an ordinary function but no shape_plugin_entry.
 */
#include "shape/plugin.h"

SHAPE_PLUGIN_EXPORT int not_a_plugin_answer(void);

SHAPE_PLUGIN_EXPORT int not_a_plugin_answer(void) { return 42; }
