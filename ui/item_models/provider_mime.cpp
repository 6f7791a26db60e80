// SPDX-License-Identifier: Apache-2.0
#include "provider_mime.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeData>

namespace kforge::ui {

QString providerMimeType() { return QStringLiteral("application/x-kforge-provider"); }

QMimeData* createProviderMimeData(const ProviderDrag& provider)
{
    auto* mime = new QMimeData;
    const QJsonObject object{{QStringLiteral("type"), provider.type}, {QStringLiteral("function"), provider.function}};
    mime->setData(providerMimeType(), QJsonDocument(object).toJson(QJsonDocument::Compact));
    // Dropped into a text field, it reads as the plan's own spelling of the provider.
    mime->setText(provider.type);
    return mime;
}

std::optional<ProviderDrag> providerFromMimeData(const QMimeData* mime)
{
    if (!mime || !mime->hasFormat(providerMimeType()))
        return std::nullopt;
    const QJsonObject object = QJsonDocument::fromJson(mime->data(providerMimeType())).object();
    ProviderDrag provider{object.value(QStringLiteral("type")).toString(),
                          object.value(QStringLiteral("function")).toString()};
    if (provider.type.isEmpty() || provider.function.isEmpty())
        return std::nullopt;
    return provider;
}

} // namespace kforge::ui
