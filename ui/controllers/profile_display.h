// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the profile side's controllers need of the page that shows the runs: which run is shown, the header's
// origin, and pictures of its chart and timeline. ProfilePage implements it, so that no controller includes a view
// (docs/design/architecture.md, "Who may include what").
#include <QString>

#include <memory>

namespace kforge {
struct ProfileRun;
}

namespace kforge::ui {

class ProfileDisplay {
public:
    enum class Picture { Chart, Timeline };

    virtual std::shared_ptr<const kforge::ProfileRun> shownRun() const = 0;
    // Where the runs came from, for the header: "" for runs made here, else a .kfprof file name.
    virtual void setOrigin(const QString& origin) = 0;
    // A PNG of that picture of the shown run; false with `error` set when it cannot be written.
    virtual bool savePicture(Picture picture, const QString& file, QString* error) const = 0;

protected:
    ~ProfileDisplay() = default;
};

} // namespace kforge::ui
