// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace kforge::ui {

// Organization and application names decide where QSettings keeps recent files and window state; the app
// and its tests must use the same ones.
void applyApplicationIdentity();

} // namespace kforge::ui
