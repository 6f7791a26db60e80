// SPDX-License-Identifier: Apache-2.0
#pragma once
// The main window's parts (views, models, controllers) by object name, as Qt's own tools and accessibility find
// them: the window keeps no accessor per part. The studio's startup script and the tests reach them this way.
#include <QObject>
#include <QString>
#include <QtGlobal>

namespace kforge::ui {

// The window's descendant of type T named `objectName`; a part that is not there is a programming error.
template <class T> T* part(const QObject& window, const char* objectName)
{
    T* found = window.findChild<T*>(QString::fromLatin1(objectName));
    if (!found)
        qFatal("the main window has no %s named '%s'", T::staticMetaObject.className(), objectName);
    return found;
}

} // namespace kforge::ui
