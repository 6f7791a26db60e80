// SPDX-License-Identifier: Apache-2.0
#pragma once
// The bar above the plan editor when the plan was measured elsewhere: which entries differ from this machine and
// why, with Re-validate (check them here, disabling those that fail) and Accept (keep them as they are).
#include <kforge/provenance.h>

#include <QFrame>

#include <vector>

class QLabel;
class QPushButton;

namespace kforge {
struct Plan;
}

namespace kforge::ui {

class ProvenanceBanner : public QFrame {
    Q_OBJECT
public:
    explicit ProvenanceBanner(QWidget* parent = nullptr);

    // Shows the flagged entries of `plan` and `otherModel`, why the plan was made for another model (hidden when
    // there is neither).
    void setChanges(const kforge::Plan& plan, const std::vector<kforge::ProvenanceChange>& changes,
                    const QString& otherModel = {});
    void setBusy(bool busy); // while re-validating: the buttons wait
    QString text() const;
    QPushButton* revalidateButton() const { return m_revalidate; }
    QPushButton* acceptButton() const { return m_accept; }

Q_SIGNALS:
    void revalidateRequested();
    void acceptRequested();

private:
    QLabel* m_label;
    QPushButton* m_revalidate;
    QPushButton* m_accept;
};

} // namespace kforge::ui
