// SPDX-License-Identifier: Apache-2.0
#pragma once
// The main window's views and models by object name (ui/parts_by_name.h), for the tests.
#include "parts_by_name.h"

namespace kforge::ui::test {

using kforge::ui::part;

} // namespace kforge::ui::test
