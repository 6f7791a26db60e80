// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QWidget>

class QLabel;
class QPushButton;
class QTreeView;

namespace kforge::ui {

class CaptureListModel;

// Graph captures: the session's CUDA graph captures with the providers each baked in, stale marks after plan
// edits, and the patches failed captures left behind (warning colour, reason, Unwind). A Capture button
// asks for a new capture. Without a CUDA device everything but the explanation is disabled.
class CapturesView : public QWidget {
    Q_OBJECT
public:
    explicit CapturesView(CaptureListModel* model, QWidget* parent = nullptr);

    QTreeView* view() const;
    QPushButton* captureButton() const;
    QPushButton* unwindButton() const;
    QString explanation() const; // what the caption says: why capturing is off, or what the view shows

    // `explanation` is shown when `available` is false (no CUDA device).
    void setCaptureAvailable(bool available, const QString& explanation = {});
    // Capturing waits while the session is busy (a forward, a capture or a profile runs); `reason` says which.
    void setBusy(bool busy, const QString& reason = {});
    bool isCaptureAvailable() const { return m_available; }

Q_SIGNALS:
    void captureRequested();
    void unwindRequested();

private:
    void update();

    CaptureListModel* m_model;
    QTreeView* m_view;
    QLabel* m_caption;
    QPushButton* m_capture;
    QPushButton* m_unwind;
    bool m_available = true;
    QString m_unavailableText;
    bool m_busy = false;
    QString m_busyReason;
};

} // namespace kforge::ui
