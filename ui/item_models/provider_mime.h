// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QString>

#include <optional>

class QMimeData;

namespace kforge::ui {

// What a provider dragged from the catalog carries: the provider type and the function it replaces, as
// {"type": ..., "function": ...} under application/x-kforge-provider.
struct ProviderDrag {
    QString type;
    QString function;
};

QString providerMimeType();
QMimeData* createProviderMimeData(const ProviderDrag& provider); // the caller owns it
// Null when `mime` carries no provider or a malformed one.
std::optional<ProviderDrag> providerFromMimeData(const QMimeData* mime);

} // namespace kforge::ui
