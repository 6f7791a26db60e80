#pragma once
#include <QMainWindow>

#include <memory>

class QLabel;
class QMenu;
class QProgressBar;
class QStackedWidget;

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

class ModelLoader;
class ModuleTreeModel;
class ModuleTreeView;
class RecentFiles;

class MainWindow : public QMainWindow {
    Q_OBJECT
    // Off under test and in batch runs: errors are reported through loadFailed() only.
    Q_PROPERTY(bool modalErrors READ modalErrors WRITE setModalErrors)
    // Off for batch runs (--screenshot): recent files and window geometry are left as the user had them.
    Q_PROPERTY(bool persistent READ isPersistent WRITE setPersistent)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)

public:
    struct Actions {
        QAction* open = nullptr;
        QMenu* openBuiltin = nullptr;
        QMenu* openRecent = nullptr;
        QAction* clearRecent = nullptr;
        QAction* quit = nullptr;
        QAction* about = nullptr;
    };

    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // A file path or "builtin:NAME". Returns at once; modelLoaded() or loadFailed() follows.
    void openSource(const QString& source);
    void restoreSettings();

    bool isLoading() const;
    const kforge::ModelSession* session() const;
    QString source() const;
    ModuleTreeModel* moduleModel() const;
    ModuleTreeView* moduleView() const;
    RecentFiles* recentFiles() const;
    const Actions& actions() const;

    bool modalErrors() const;
    void setModalErrors(bool modal);
    bool isPersistent() const;
    void setPersistent(bool persistent);

Q_SIGNALS:
    void modelLoaded(const QString& source);
    void loadFailed(const QString& message); // one line, naming the file or builtin
    void loadingChanged(bool loading);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void createStatusBar();
    void rebuildRecentMenu();
    void chooseFile();
    void showAbout();
    void setBusy(bool busy);
    void showSession(const QString& source, std::shared_ptr<kforge::ModelSession> session);
    void reportFailure(const QString& source, const QString& error);
    void updateModelStatus();

    ModelLoader* m_loader = nullptr;
    RecentFiles* m_recent = nullptr;
    ModuleTreeModel* m_model = nullptr;
    ModuleTreeView* m_view = nullptr;
    QStackedWidget* m_pages = nullptr;
    QLabel* m_placeholder = nullptr;
    QLabel* m_busyLabel = nullptr;
    QProgressBar* m_busyBar = nullptr;
    QLabel* m_modelLabel = nullptr;
    Actions m_actions;

    std::shared_ptr<kforge::ModelSession> m_session;
    QString m_source;
    bool m_modalErrors = true;
    bool m_persistent = true;
};

} // namespace kforge::ui
