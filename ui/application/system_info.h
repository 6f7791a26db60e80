// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/doctor.h>

#include <QString>

namespace kforge::ui {

// kforge::systemReport(), taken once per process: probing CUDA and CUPTI takes a moment, and the answer
// does not change while the application runs. An empty report (no devices) when the probe throws.
const kforge::SystemReport& cachedSystemReport();

bool cudaDeviceVisible();
// Why graph capture is unavailable here, naming what torch reports; "" when a CUDA device is visible.
QString cudaUnavailableExplanation();
// What the status bar calls a session device: "CPU", or the CUDA device's name ("CUDA 0: NVIDIA H200 …").
QString deviceDisplayName(const QString& sessionDevice);

} // namespace kforge::ui
