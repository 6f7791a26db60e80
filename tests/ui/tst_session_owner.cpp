// SPDX-License-Identifier: Apache-2.0
// SessionOwner, the desktop app's one answer to "is something using the session": a claim names what holds the
// session, a new session stops the work on the old one before anyone sees it, and the controllers of forwards,
// profiles and optimisations refuse through it rather than by asking each other.
#include "controllers/optimize_controller.h"
#include "controllers/profile_controller.h"
#include "controllers/run_controller.h"
#include "controllers/session_owner.h"

#include <kforge/model_session.h>
#include <kforge/plan.h>

#include <QSignalSpy>
#include <QTest>

using kforge::ui::SessionOwner;
using Activity = kforge::ui::SessionOwner::Activity;

class TestSessionOwner : public QObject {
    Q_OBJECT

private:
    static std::shared_ptr<kforge::ModelSession> tinyGpt()
    {
        return std::shared_ptr<kforge::ModelSession>(kforge::ModelSession::open("builtin:tiny-gpt"));
    }

private Q_SLOTS:
    void aClaimNamesWhatHoldsTheSession()
    {
        SessionOwner owner;
        QString error;
        QVERIFY(!owner.claim(Activity::Forward, &error));
        QVERIFY2(error.contains(QStringLiteral("No model")), qPrintable(error));

        owner.setSession(QStringLiteral("builtin:tiny-gpt"), tinyGpt());
        QSignalSpy activity(&owner, &SessionOwner::activityChanged);
        QVERIFY(owner.claim(Activity::Profile, &error));
        QCOMPARE(owner.activity(), Activity::Profile);
        QVERIFY(owner.isBusy());
        QVERIFY(owner.isMeasuring());
        QCOMPARE(activity.count(), 1);
        for (Activity other : {Activity::Forward, Activity::Capture, Activity::Profile, Activity::Optimize}) {
            QVERIFY(!owner.canStart(other));
            QVERIFY(!owner.claim(other, &error));
            QVERIFY2(error.contains(QStringLiteral("profile is already running")), qPrintable(error));
        }
        owner.release(Activity::Forward); // not the holder: nothing changes
        QCOMPARE(owner.activity(), Activity::Profile);
        owner.release(Activity::Profile);
        QCOMPARE(owner.activity(), Activity::Idle);
        QCOMPARE(activity.count(), 2);
        QVERIFY(!owner.isMeasuring());
    }

    void aRuntimeLeftActiveLetsOnlyForwardsAndCapturesStart()
    {
        SessionOwner owner;
        owner.setSession(QStringLiteral("builtin:tiny-gpt"), tinyGpt());
        owner.setRuntimeHeld(true);
        QString error;
        for (Activity measuring : {Activity::Profile, Activity::Benchmark, Activity::Optimize, Activity::Verify}) {
            QVERIFY(!owner.claim(measuring, &error));
            QVERIFY2(error.contains(QStringLiteral("unwind")), qPrintable(error));
        }
        QVERIFY(owner.canStart(Activity::Capture));
        QVERIFY(owner.claim(Activity::Forward, &error)); // a forward replaces the runtime
        owner.release(Activity::Forward);
        owner.setSession(QStringLiteral("builtin:tiny-gpt"), tinyGpt()); // a new model has no runtime of ours
        QVERIFY(owner.canStart(Activity::Profile));
    }

    void aNewSessionStopsTheOldWorkBeforeAnyoneSeesIt()
    {
        SessionOwner owner;
        QStringList order;
        connect(&owner, &SessionOwner::aboutToChangeSession, this,
                [&] { order << (owner.session() ? QStringLiteral("stop old") : QStringLiteral("stop none")); });
        connect(&owner, &SessionOwner::sessionChanged, this, [&] { order << QStringLiteral("changed"); });
        const auto first = tinyGpt();
        owner.setSession(QStringLiteral("builtin:tiny-gpt"), first);
        QCOMPARE(owner.session(), first);
        owner.setSession(QStringLiteral("builtin:tiny-gpt"), tinyGpt());
        QCOMPARE(order, (QStringList{QStringLiteral("stop none"), QStringLiteral("changed"), QStringLiteral("stop old"),
                                     QStringLiteral("changed")}));
        QVERIFY(owner.session() != first);
    }

    void controllersRefuseThroughTheOwner()
    {
        SessionOwner owner;
        kforge::ui::RunController forwards(&owner);
        kforge::ui::ProfileController profiles(&owner);
        kforge::ui::OptimizeController optimizer(&owner);
        owner.setSession(QStringLiteral("builtin:tiny-gpt"), tinyGpt());
        QVERIFY(owner.claim(Activity::Optimize));
        QVERIFY(forwards.breakpointsSuspended()); // a measured forward never pauses
        QString error;
        QVERIFY(!forwards.run(kforge::Plan{}, &error));
        QVERIFY2(error.contains(QStringLiteral("optimisation")), qPrintable(error));
        QVERIFY(!profiles.runBaseline(&error));
        QVERIFY2(error.contains(QStringLiteral("optimisation")), qPrintable(error));
        owner.release(Activity::Optimize);
        QVERIFY(!forwards.breakpointsSuspended());

        QSignalSpy finished(&forwards, &kforge::ui::RunController::runFinished);
        QVERIFY(forwards.run(kforge::Plan{}, &error));
        QCOMPARE(owner.activity(), Activity::Forward);
        QVERIFY(!optimizer.start(&error));
        QVERIFY2(error.contains(QStringLiteral("forward")), qPrintable(error));
        QVERIFY(finished.wait(60'000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        QCOMPARE(owner.activity(), Activity::Idle);
    }
};

QTEST_GUILESS_MAIN(TestSessionOwner)
#include "tst_session_owner.moc"
