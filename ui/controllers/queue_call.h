// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a controller's work on a worker thread reports to the UI thread: progress, log lines, partial results. Each
// report is a queued call of one of the controller's members (a signal or a slot) with values copied for the trip;
// nothing the worker owns is touched on the UI thread.
#include <QMetaObject>
#include <QString>

#include <functional>
#include <string>

namespace kforge::ui {

// Calls `(object->*member)(values...)` on `object`'s thread, later (Qt::QueuedConnection).
template <typename Object, typename Member, typename... Values>
void queueCall(Object* object, Member member, Values... values)
{
    QMetaObject::invokeMethod(
        object, [object, member, values...] { (object->*member)(values...); }, Qt::QueuedConnection);
}

// A log callback for the engine's options (std::string lines, on the worker) that calls `member(QString)` queued.
template <typename Object, typename Member>
std::function<void(const std::string&)> queuedLines(Object* object, Member member)
{
    return [object, member](const std::string& line) { queueCall(object, member, QString::fromStdString(line)); };
}

} // namespace kforge::ui
