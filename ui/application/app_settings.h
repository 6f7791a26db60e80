// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/model_session.h>

#include <QStringList>

namespace kforge::ui {

// The preferences the settings dialog edits, one QSettings key each, read where they take effect.
namespace AppSettings {

// Run › Keep Leftovers when the window opens.
bool keepLeftovers();
void setKeepLeftovers(bool keep);

// Forwards run before a graph capture (lazy initialisation and workspaces stay out of the graph).
int captureWarmupIterations();
void setCaptureWarmupIterations(int count);

// How TorchScript runs forwards of models opened from now on (kforge::GraphExecutor); Direct by default, so that
// large models answer at once.
kforge::GraphExecutor graphExecutor();
void setGraphExecutor(kforge::GraphExecutor executor);

// LibTorch's intra-op threads for models opened from now on (OpenOptions::intraOpThreads, as kforge --threads): 0,
// the default, is LibTorch's own count (one per core). One thread makes CPU timings steadiest.
int intraOpThreads();
void setIntraOpThreads(int threads);
inline constexpr int kMaxIntraOpThreads = 1024;

// Provider plugins (.so) loaded at start, after --provider-plugin and KFORGE_PROVIDER_PATH.
QStringList providerPluginPaths();
void setProviderPluginPaths(const QStringList& paths);

// Op libraries (.so, TORCH_LIBRARY) loaded at start, after --ops-library and KFORGE_OPS_PATH.
QStringList opLibraryPaths();
void setOpLibraryPaths(const QStringList& paths);

} // namespace AppSettings
} // namespace kforge::ui
