// SPDX-License-Identifier: Apache-2.0
#pragma once
// The main window's views and models by object name, as Qt's own tools and accessibility find them: the window
// keeps no accessors for tests.
#include <QObject>
#include <QString>
#include <QtGlobal>

namespace kforge::ui::test {

template <class T> T* part(const QObject& window, const char* objectName)
{
    T* found = window.findChild<T*>(QString::fromLatin1(objectName));
    if (!found)
        qFatal("the main window has no %s named '%s'", T::staticMetaObject.className(), objectName);
    return found;
}

} // namespace kforge::ui::test
