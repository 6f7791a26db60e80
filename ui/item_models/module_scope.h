// SPDX-License-Identifier: Apache-2.0
#pragma once
// The module the user is looking at, shared by the pages that follow it, as Hotspot's FilterAndZoomStack is: the
// module tree sets it, and the Profile page (its kernel table and timeline) and the plan editor (the scope of a new
// entry) follow it. A report has its own, for its own tree and page.
#include <QObject>
#include <QString>

namespace kforge::ui {

class ModuleScope : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    QString path() const { return m_path; } // "" for the root
    void setPath(const QString& path)
    {
        if (path == m_path)
            return;
        m_path = path;
        Q_EMIT changed(m_path);
    }

Q_SIGNALS:
    void changed(const QString& path);

private:
    QString m_path;
};

} // namespace kforge::ui
