// SPDX-License-Identifier: Apache-2.0
#include "application/application_identity.h"

#include <kforge/version.h>

#include <QCoreApplication>
#include <QString>

namespace kforge::ui {

void applyApplicationIdentity()
{
    QCoreApplication::setOrganizationName(QStringLiteral("KernelForge"));
    QCoreApplication::setApplicationName(QStringLiteral("KForge Studio"));
    QCoreApplication::setApplicationVersion(QStringLiteral(KFORGE_VERSION_STRING));
}

} // namespace kforge::ui
