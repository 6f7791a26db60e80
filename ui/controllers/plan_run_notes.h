// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a forward, capture or profile with the plan leaves on the plan: before it starts, the entries that can never
// fire (kforge::planWarnings); after it ends, the calls each entry declined, in the plan editor's Declined column,
// if the plan is still the one it ran (an edit since would put the counts on other entries).
#include <QObject>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <vector>

namespace kforge {
struct EntryDeclines;
struct Plan;
} // namespace kforge

namespace kforge::ui {

class PlanDocument;
class SessionOwner;

class PlanRunNotes : public QObject {
    Q_OBJECT
public:
    PlanRunNotes(SessionOwner* owner, PlanDocument* document, QObject* parent = nullptr);

    // Before a run with the document's plan on `device` ("cpu", "cuda[:N]"): keeps the warnings, emits them.
    void noteWarnings(const QString& device);
    void clearWarnings(); // a run without a plan
    QStringList warnings() const { return m_warnings; }
    // A status bar line, the first warning after it (and how many more).
    QString withWarnings(const QString& message) const;

    // The run with the plan started: the Declined column is cleared until declinesArrived().
    void runStarted();
    void declinesArrived(const std::vector<kforge::EntryDeclines>& declines);
    void runMeasuredNothing(); // the Declined column stays empty
    void sessionChanged();     // the declines were the previous model's

Q_SIGNALS:
    void warningsChanged(const QStringList& warnings);

private:
    SessionOwner* m_owner;
    PlanDocument* m_document;
    QStringList m_warnings;
    std::optional<std::uint64_t> m_revision; // the plan revision (PlanModel) a running plan run started with
};

} // namespace kforge::ui
